// load-test when Redis restarts empty (kill -9, no persistence), on real Redis
// with an orchestrator and two workers as processes of the built CLI: the test
// running at the restart ends with the results read before it; the workers,
// whose epoch is now ahead of test:epoch (which counts from 0 again), notice
// the new generation and follow it, so the next test's requests reach the
// server. A test whose users run nothing is reported and failed.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keyBuilders } from '../core/contract.ts';
import { contract } from '../plugins/load-test/contract.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, root } from './support/cli.ts';
import { api, startLoad, startLoadDeployment } from './support/load.ts';
import { until } from './support/until.ts';

buildIfStale();
const prefix = '{lr}:';
const { redis, backend, target, port, orchestrator, workers } = await startLoadDeployment(t, prefix, ['heartbeatInterval=0.3', 'deadAfter=1.5', 'metricsInterval=0.5', 'gracefulStop=1']);
const keys = keyBuilders(contract, prefix);

const paced = resolve(root, 'test/fixtures/load-test/paced.mjs');
const state = async () => ((await api(port, 'GET', '/api/status')).body as { state: string }).state;
const registered = async () => ((await backend.send(['SMEMBERS', keys.workers()])) as string[]).sort().join();

async function runTest(durationMs: number): Promise<{ served: number; result: { epoch: number; total: { count: number } } }> {
  const before = (await target.stats()).total;
  const started = await api(port, 'POST', '/api/start', { scenario: paced, users: 6, spawnRate: 100, duration: `${durationMs}ms`, params: { baseUrl: target.url } });
  if (started.status !== 202) throw new Error(`start: ${started.status} ${JSON.stringify(started.body)}`);
  await until('the test to end by its duration', async () => (await state()) === 'IDLE', 20_000);
  const result = (await api(port, 'GET', '/api/status')).body.result;
  return { served: (await target.stats()).total - before, result };
}

t.test('Redis killed -9 and restarted empty between two tests: the second test still reaches the server', async (t) => {
  // Two tests first: the workers' epoch (2) is then ahead of the epoch a fresh Redis gives the next test (1).
  for (let i = 0; i < 2; i++) {
    const { served, result } = await runTest(1000);
    t.ok(served > 0 && result.total.count === served, `test ${result.epoch}: ${served} requests served and counted`);
  }
  t.equal(Number(await backend.send(['GET', keys.testEpoch()])), 2);
  const generation = await backend.send(['GET', keys.generation()]);
  t.ok(generation, 'the first test created the generation');

  await redis.restart();
  t.equal(await backend.send(['GET', keys.testEpoch()]).catch(() => backend.send(['GET', keys.testEpoch()])), null, 'Redis came back empty');
  await until('both workers to register again', async () => (await registered()) === 'wA,wB', 15_000);

  const { served, result } = await runTest(2000);
  t.equal(result.epoch, 1, 'the new test has epoch 1 (the counter started again)');
  t.not(await backend.send(['GET', keys.generation()]), generation, 'a new generation');
  t.ok(served > 20, `the second test's requests reached the server: ${served}`);
  t.equal(result.total.count, served, `and are all counted (${result.total.count})`);
  for (const w of workers) {
    t.ok(
      w.lines.some((l) => l.msg === 'the coordination state is gone (Redis restarted empty?): following the new epochs'),
      'each worker noticed the coordination state was gone',
    );
  }
  const senders = new Set<string>();
  for (const metricId of (await backend.send(['SMEMBERS', keys.metrics()])) as string[]) {
    for (const [, f] of (await backend.send(['XRANGE', keys.metric({ metricId }), '-', '+'])) as [string, string[]][]) senders.add(f[f.indexOf('worker') + 1]!);
  }
  t.same([...senders].sort(), ['wA', 'wB'], 'both workers ran users of the new test');
});

t.test('Redis restarted while a test runs: the test ends with what was read before, the workers stop, the next test runs', async (t) => {
  const before = (await target.stats()).total;
  const started = await api(port, 'POST', '/api/start', { scenario: paced, users: 6, spawnRate: 100, params: { baseUrl: target.url } });
  t.equal(started.status, 202);
  await until('results to come in', async () => ((await api(port, 'GET', '/api/status')).body.result?.total.count ?? 0) > 30, 15_000);
  await redis.restart();
  await orchestrator.waitFor((l) => l.msg === 'the test lost its coordination state: ending it here', 15_000);
  await until('the orchestrator to be idle', async () => (await state()) === 'IDLE', 10_000);
  const lost = (await api(port, 'GET', '/api/status')).body.result;
  const served = (await target.stats()).total - before;
  t.ok(lost.total.count > 0 && lost.total.count <= served, `the interrupted test keeps the ${lost.total.count} requests read before the restart (of ${served} served)`);
  // The workers stop the lost test's users: after a moment no request arrives.
  await until('the lost test\'s users to stop', async () => {
    const mark = (await target.stats()).now;
    await new Promise((r) => setTimeout(r, 600));
    return (await target.stats(mark)).arrivedSince === 0;
  }, 15_000);
  t.pass('the lost test\'s users stopped');
  await until('both workers to register again', async () => (await registered()) === 'wA,wB', 15_000);
  const next = await runTest(1500);
  t.ok(next.served > 10 && next.result.total.count === next.served, `the next test runs: ${next.served} served and counted`);
});

t.test('a test whose users run nothing is reported and fails, unless its scenario allows it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coord-idle-'));
  const idle = join(dir, 'idle.mjs');
  writeFileSync(idle, "export default { steps: [{ name: 'wait', run: (user) => user.sleep(50) }] };\n");
  const allowed = join(dir, 'allowed.mjs');
  writeFileSync(allowed, "export default { allowNoRequests: true, steps: [{ name: 'wait', run: (user) => user.sleep(50) }] };\n");
  const load = await startLoad({ options: { metricsInterval: 0.2, gracefulStop: 1 } });
  t.teardown(() => load.handle.stop('test done'));
  const controller = load.controller!;
  for (const [scenario, fails] of [[idle, true], [allowed, false]] as const) {
    const { finished } = await controller.start({ scenario, users: 3, spawnRate: 100, durationMs: 800 });
    const result = await finished;
    t.equal(result.total.count, 0, 'no request');
    t.equal(controller.ranNothing, fails, fails ? 'reported as a test that ran nothing' : 'allowNoRequests: true lets it pass');
    t.equal((await controller.status()).noRequests, fails ? true : undefined, 'and so does /api/status');
  }
  const { noRequestsOutcome } = await import('../plugins/load-test/metrics/traffic.ts');
  const { loadScenario } = await import('../plugins/load-test/scenario/loader.ts');
  const { finished } = await controller.start({ scenario: idle, users: 1, spawnRate: 100, durationMs: 300 });
  t.same(noRequestsOutcome(await finished, await loadScenario(idle)), { threshold: 'requests>0', actual: 0, ok: false }, 'the outcome a run adds to its thresholds');
  const failed = coordSync(['load', 'run', '--scenario', idle, '--users', '2', '--duration', '700ms', '--out', 'json']);
  t.equal(failed.status, 99, 'coord load run exits 99');
  t.match(failed.stderr, /^coord: FAIL requests>0 \(actual 0\): the test ran no requests/m, 'naming why');
  t.equal(JSON.parse(failed.stdout).total.count, 0, 'stdout stays the JSON result');
  const passed = coordSync(['load', 'run', '--scenario', allowed, '--users', '2', '--duration', '700ms', '--out', 'json']);
  t.equal(passed.status, 0, 'allowNoRequests: true passes');
});

t.test('Redis emptied while a test stops: the stop ends the test with what it had, and the next test starts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coord-slow-'));
  const slow = join(dir, 'slow.mjs');
  // A step that does not return early on stop: its worker acknowledges stop_test only after gracefulStop.
  writeFileSync(slow, `export default { params: { baseUrl: '${target.url}' }, steps: [{ name: 'slow', run: async (user) => { await user.http.get('/ping'); await new Promise((r) => setTimeout(r, 4000)); } }] };\n`);
  const options = { heartbeatInterval: 0.3, deadAfter: 1.5, metricsInterval: 0.3, gracefulStop: 3 };
  const prefixed = { redis: redis.url, prefix: '{ls}:' };
  const load = await startLoad({ ...prefixed, roles: ['orchestrator', 'worker'], options });
  t.teardown(() => load.handle.stop('test done'));
  const controller = load.controller!;
  await controller.start({ scenario: slow, users: 2, spawnRate: 100 });
  await until('the first requests counted', async () => ((await controller.status()).result?.total.count ?? 0) >= 2, 10_000);
  const stopping = controller.stop('stopped by the test');
  await new Promise((r) => setTimeout(r, 500)); // the orchestrator now waits for the worker's acknowledgement
  await backend.send(['FLUSHALL']);
  const result = await stopping;
  t.ok(result.total.count >= 2, `the stop ends the test with the ${result.total.count} requests read before`);
  t.ok(load.logs.some((l) => l.msg === 'the test lost its coordination state: ending it here'), 'and says the state was lost');
  t.equal(controller.finished, undefined, 'no test is left running here');
  await until('the worker to register again', async () => ((await backend.send(['SMEMBERS', '{ls}:workers'])) as string[]).length === 1, 10_000);
  const next = await controller.start({ scenario: paced, users: 2, spawnRate: 100, durationMs: 800, params: { baseUrl: target.url } });
  t.equal(next.epoch, 1, 'the next test starts (epoch 1 of the new generation)');
  t.ok((await next.finished).total.count > 0, 'and runs');
});
