// A worker's metric batches when writes fail, on real Redis: a flush Redis
// refused is kept and written again, before anything newer; a batch written
// twice (the write went through, its reply was lost) is counted once by the
// orchestrator's accounting; what never arrives is named as unaccounted;
// a worker whose final count cannot be read is named by the orchestrator.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend, Command } from '../core/backend.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import { RequestAccounting } from '../plugins/load-test/metrics/accounting.ts';
import plugin from '../plugins/load-test/index.ts';
import { readBatches } from '../plugins/load-test/run-lifecycle/keyspace.ts';
import type { Run } from '../plugins/load-test/run-lifecycle/test-run.ts';
import { readTallies } from '../plugins/load-test/run-lifecycle/worker-acks.ts';
import { MetricsRecorder } from '../plugins/load-test/metrics/recorder.ts';
import type { Ctx } from '../plugins/load-test/context.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
const real = await createBackend({ url: redis.url });
t.teardown(async () => {
  await real.close();
  await redis.stop();
});

/** The real backend, whose next pipelines fail as a failover makes them fail: refused before Redis ran them, or run and the reply lost. */
function faulty(): { backend: Backend; refuseNext(n: number): void; loseReplyNext(n: number): void } {
  let refuse = 0;
  let loseReply = 0;
  const pipeline = async (commands: readonly Command[]) => {
    if (refuse > 0) {
      refuse -= 1;
      throw new Error('CLUSTERDOWN The cluster is down');
    }
    const replies = await real.pipeline(commands);
    if (loseReply > 0) {
      loseReply -= 1;
      throw new Error('Connection is closed.');
    }
    return replies;
  };
  // Every other call goes to the real backend, as the real backend (its methods use private fields).
  const backend = new Proxy(real, {
    get: (target, name) => {
      if (name === 'pipeline') return pipeline;
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { backend, refuseNext: (n) => (refuse = n), loseReplyNext: (n) => (loseReply = n) };
}

t.test('refused and reply-lost writes: every request counted once, whatever order the batches arrive in', async (t) => {
  const { backend, refuseNext, loseReplyNext } = faulty();
  const ctx = scenarioContext({ plugin, backend, keyPrefix: '{br}:', signal: new AbortController().signal }) as unknown as Ctx;
  const recorder = new MetricsRecorder(ctx, 'w1', 7);
  const record = (n: number) => {
    for (let i = 0; i < n; i++) recorder.record('GET /', 1, undefined, 'http');
  };

  record(10);
  refuseNext(1);
  await t.rejects(recorder.flush(), /CLUSTERDOWN/, 'a refused write rejects the flush');
  t.equal(recorder.unwrittenRequests, 10, 'and keeps its batch');
  record(5);
  refuseNext(1); // the kept batch is sent first and refused again; the new one goes through
  await t.rejects(recorder.flush(), /CLUSTERDOWN/);
  t.equal(recorder.unwrittenRequests, 10, 'the new batch is written without waiting for the kept one');
  record(7);
  loseReplyNext(1); // the kept batch goes through this time, but its reply is lost
  await t.rejects(recorder.flush(), /Connection is closed/, 'a write whose reply is lost rejects too');
  t.equal(recorder.unwrittenRequests, 10, 'so the batch is still kept');
  record(1);
  await recorder.flush();
  t.equal(recorder.unwrittenRequests, 0, 'the next flush writes it again, and its own');

  const batches = await readBatches(ctx, new Map());
  t.same(batches.map((b) => [b.count, b.seq]), [[5, 2], [10, 1], [7, 3], [10, 1], [1, 4]], 'the stream: a batch late, after newer ones, and one written twice');
  const accounting = new RequestAccounting(7);
  const counted = batches.filter((b) => accounting.accept(b));
  t.same(counted.map((b) => b.count), [5, 10, 7, 1], 'each batch counted once, the late one too');
  accounting.claim('w1', recorder.writer, recorder.requests);
  t.equal(recorder.requests, 23);
  t.equal(accounting.verdict(), undefined, 'and nothing is missing');
});

t.test('a batch Redis acknowledged and then lost (a failover to a replica behind it) is named as unaccounted', async (t) => {
  const ctx = scenarioContext({ plugin, backend: real, keyPrefix: '{bl}:', signal: new AbortController().signal }) as unknown as Ctx;
  const recorder = new MetricsRecorder(ctx, 'w2', 3);
  for (let i = 0; i < 8; i++) recorder.record('GET /', 1, undefined, 'http');
  await recorder.flush();
  await real.send(['DEL', ctx.keys.metric({ metricId: 'GET /' })]); // the promoted replica never had it
  for (let i = 0; i < 4; i++) recorder.record('GET /', 1, undefined, 'http');
  await recorder.flush();
  const accounting = new RequestAccounting(3);
  for (const batch of await readBatches(ctx, new Map())) accounting.accept(batch);
  t.match(accounting.verdict(), { unaccounted: 8, reasons: [/worker w2: 8 of its 12 requests are in no metric batch read/] }, 'the later batch\'s running total names the 8 lost');

  // The last batch lost: no later batch carries a total past it, the worker's final total (its heartbeat) does.
  for (let i = 0; i < 3; i++) recorder.record('GET /', 1, undefined, 'http');
  await recorder.flush();
  const entries = (await real.send(['XRANGE', ctx.keys.metric({ metricId: 'GET /' }), '-', '+'])) as [string, string[]][];
  await real.send(['XDEL', ctx.keys.metric({ metricId: 'GET /' }), entries.at(-1)![0]]);
  const last = new RequestAccounting(3);
  for (const batch of await readBatches(ctx, new Map())) last.accept(batch);
  t.match(last.verdict(), { unaccounted: 8 }, 'from the batches alone, only the earlier loss shows');
  last.claim('w2', recorder.writer, recorder.requests);
  t.match(last.verdict(), { unaccounted: 11 }, 'the worker\'s final total names the lost last batch too');
});

t.test('the workers\' final counts: each read for this test is claimed; one missing, of another test or unreadable is returned, for the orchestrator to name', async (t) => {
  const ctx = scenarioContext({ plugin, backend: real, keyPrefix: '{bt}:', signal: new AbortController().signal }) as unknown as Ctx;
  const status = (workerId: string) => ctx.keys.workerStatus({ workerId });
  await real.send(['HSET', status('done'), 'requests', 12, 'requests_epoch', 5, 'requests_writer', 'wr1']);
  await real.send(['HSET', status('idle'), 'requests', 0, 'requests_epoch', 5, 'requests_writer', 'none']);
  await real.send(['HSET', status('older'), 'requests', 40, 'requests_epoch', 4, 'requests_writer', 'wr0']);
  await real.send(['HSET', status('uncounted'), 'status', 'running']);
  await real.send(['SET', status('broken'), 'not a hash']); // its HMGET fails: WRONGTYPE
  const run = { epoch: 5, accounting: new RequestAccounting(5) } as Run;
  const unread = await readTallies(ctx, run, ['done', 'idle', 'older', 'uncounted', 'broken', 'gone', 'done']);
  t.same(unread, ['older', 'uncounted', 'broken', 'gone'], 'every worker without a count for this test, each once');
  t.match(run.accounting.verdict(), { unaccounted: 12, reasons: [/worker done: 12 of its 12 requests are in no metric batch read/] }, 'the count read is claimed (no batch was read here)');
});
