// A users' thread asked to stop while its worker's own thread waits for a core
// is not taken for one that users' code holds. Here the main thread is held
// 800 ms (a busy loop) just after the stop was asked: the users' thread goes
// on stopping and saying so, but its messages wait; the stop's next look comes
// from a timer, which runs before them. It must read them before it judges,
// else it terminates a thread that was fine and its last metric batch is lost
// (bench/scale/load-test.mjs: 46 of 100 threads at one stop on a 2-core machine).
import t from 'tap';
import { resolve } from 'node:path';
import type { WorkerRole } from '../plugins/load-test/roles/worker.ts';
import { root } from './support/cli.ts';
import { startLoad, startTarget } from './support/load.ts';
import { until } from './support/until.ts';

const target = await startTarget({ own: true });
const load = await startLoad({ options: { threads: true, metricsInterval: 0.3, gracefulStop: 2 } });
t.teardown(async () => {
  await load.handle.stop('test over');
  await target.close();
});
const paced = resolve(root, 'test/fixtures/load-test/paced.mjs');

t.test('a stop whose worker thread is held 800 ms terminates no users\' thread, and every request is counted', async (t) => {
  const controller = load.controller!;
  const worker = load.handle.role<WorkerRole>('load-test', 'worker')!;
  const before = (await target.stats()).total;
  const { finished } = await controller.start({ scenario: paced, users: 20, spawnRate: 1000, params: { baseUrl: target.url } });
  await until('requests flowing', async () => (await target.stats()).total - before > 100, 20_000);
  const session = worker.session()!;
  // From a check-phase callback: the next turn of the loop begins with its timers.
  await new Promise<void>((done) =>
    setImmediate(() => {
      void session.stop();
      const until = performance.now() + 800;
      while (performance.now() < until) {
        // the worker's thread waits for a core
      }
      done();
    }),
  );
  const result = await controller.stop('test over').then(() => finished);
  const terminated = load.logs.filter((l) => l.msg === "users' code holds their thread: terminating it");
  t.same(terminated.map((l) => l.fields), [], 'no thread terminated');
  const served = (await target.stats()).total - before;
  t.equal(result.total.count, served, `${result.total.count} counted = ${served} served`);
  t.notOk(result.incomplete, 'the result is complete');
});
