// Racing start, stop and start through the orchestrator's API (on real Redis,
// two workers): the lease is taken in the same step as IDLE → PREPARING
// (beginTest.lua), so no start ever takes a live test for abandoned and resets
// it; a stop that arrives while a start prepares stops that test. Ten races
// each end in a clean state. Also: beginTest/endTest on Redis and embedded.
import t from 'tap';
import { resolve } from 'node:path';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/load-test/index.ts';
import type { WorkerRole } from '../plugins/load-test/roles/worker.ts';
import { root } from './support/cli.ts';
import { api, startLoad, startTarget, type LoadProcess } from './support/load.ts';
import { until } from './support/until.ts';
import { freePort, startRedis } from './support/redis.ts';
import type { Ctx } from '../plugins/load-test/context.ts';

const redis = await startRedis();
const target = await startTarget();
const prefix = '{race}:';
const timing = { heartbeatInterval: 0.3, deadAfter: 1.5, metricsInterval: 0.3, gracefulStop: 1 };
const port = await freePort();
const orchestrator = await startLoad({ redis: redis.url, prefix, roles: ['orchestrator'], options: { ...timing, api: true, port } });
const workers: LoadProcess[] = [];
for (const workerId of ['wA', 'wB']) workers.push(await startLoad({ redis: redis.url, prefix, roles: ['worker'], options: { ...timing, workerId } }));
const ctx = scenarioContext({ plugin, backend: orchestrator.handle.backend, keyPrefix: prefix, signal: new AbortController().signal }) as Ctx;
t.teardown(async () => {
  for (const w of workers) await w.handle.stop('test done');
  await orchestrator.handle.stop('test done');
  await target.close();
  await redis.stop();
});

const paced = resolve(root, 'test/fixtures/load-test/paced.mjs');
const send = ctx.backend.send.bind(ctx.backend);
const activeUsers = async () => {
  let n = 0;
  for (const workerId of ['wA', 'wB']) n += Number(await send(['SCARD', ctx.keys.workerActiveUsers({ workerId })]));
  return n;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('start, stop and start raced through the API, 10 times: each race ends clean', async (t) => {
  const seen = new Set<number>();
  for (let trial = 0; trial < 10; trial++) {
    const start = () => api(port, 'POST', '/api/start', { scenario: paced, users: 6, spawnRate: 1000, params: { baseUrl: target.url } });
    const replies = await Promise.all([
      start(),
      sleep(trial * 3).then(() => api(port, 'POST', '/api/stop')),
      sleep(trial * 5).then(start),
    ]);
    for (const r of replies) seen.add(r.status);
    t.ok(replies.every((r) => [200, 202, 409].includes(r.status)), `trial ${trial}: ${replies.map((r) => r.status).join(' ')} (no server error)`);
    // Whatever won, the deployment settles: no test, or a test whose users all run.
    await until(`trial ${trial}: a settled state`, async () => {
      const status = (await api(port, 'GET', '/api/status')).body;
      if (status.state === 'IDLE') return true;
      return status.state === 'RUNNING' && status.users === 6 && (await activeUsers()) === 6;
    }, 15_000);
    const status = (await api(port, 'GET', '/api/status')).body;
    if (status.state === 'RUNNING') {
      t.equal(await send(['GET', ctx.keys.orchestrator()]), orchestrator.controller!.id, `trial ${trial}: the running test holds its lease`);
      t.equal((await api(port, 'POST', '/api/stop')).status, 200, `trial ${trial}: the running test stops`);
    }
    t.equal(await send(['GET', ctx.keys.testState()]), 'IDLE', `trial ${trial}: IDLE`);
    t.equal(await send(['EXISTS', ctx.keys.orchestrator()]), 0, `trial ${trial}: the lease is given back`);
    t.equal(await send(['SCARD', ctx.keys.users()]), 0, `trial ${trial}: no user assigned`);
    t.equal(await activeUsers(), 0, `trial ${trial}: no user running`);
    t.ok(workers.every((w) => w.handle.role<WorkerRole>('load-test', 'worker')?.session() === undefined), `trial ${trial}: no worker left in a test`);
  }
  t.notOk(orchestrator.logs.some((l) => l.msg === 'found a test whose orchestrator is gone: resetting to IDLE'), 'no start ever took the live test for abandoned');
  t.ok(seen.has(202), 'tests did start');
});

t.test('a stop sent while the start prepares stops the test it starts', async (t) => {
  const started = api(port, 'POST', '/api/start', { scenario: paced, users: 4, spawnRate: 1000, params: { baseUrl: target.url } });
  await sleep(1);
  const stopped = await api(port, 'POST', '/api/stop');
  t.equal((await started).status, 202);
  t.equal(stopped.status, 200, 'the stop waited for the start and stopped its test');
  t.equal(await send(['GET', ctx.keys.testState()]), 'IDLE');
});

for (const kind of ['redis', 'embedded'] as const) {
  t.test(`beginTest and endTest on ${kind}: state, epoch, lease and generation move together`, async (t) => {
    const backend: Backend = await createBackend({ url: kind === 'redis' ? redis.url : undefined });
    t.teardown(() => backend.close());
    const c = scenarioContext({ plugin, backend, keyPrefix: `{bt-${kind}}:`, signal: new AbortController().signal }) as Ctx;
    const begin = (owner: string, newGeneration = 'g1') =>
      c.scripts.run('beginTest', { keys: { state: {}, epoch: {}, lease: {}, generation: {} }, args: { owner, leaseSeconds: 10, newGeneration } });
    const end = (from: string, expectEpoch: number, owner: string) =>
      c.scripts.run('endTest', { keys: { state: {}, epoch: {}, lease: {} }, args: { from, expectEpoch, owner } });
    t.same(await begin('o1'), ['ok', '1', 'g1'], 'IDLE → PREPARING, epoch 1, the generation created');
    t.equal(await c.backend.send(['GET', c.keys.orchestrator()]), 'o1', 'the lease taken in the same step');
    t.same(await begin('o2'), ['err', 'STATE_CONFLICT', 'PREPARING'], 'a second start loses');
    t.same(await end('STOPPING', 1, 'o1'), ['err', 'STATE_CONFLICT', 'PREPARING']);
    t.same(await end('PREPARING', 0, 'o1'), ['err', 'EPOCH_CONFLICT', '1']);
    await c.backend.send(['SET', c.keys.orchestrator(), 'o2', 'EX', 10]);
    t.same(await end('PREPARING', 1, 'o1'), ['ok', '1'], 'back to IDLE');
    t.equal(await c.backend.send(['GET', c.keys.orchestrator()]), 'o2', "another orchestrator's lease is left alone");
    t.same(await begin('o1', 'g2'), ['err', 'LEASE_HELD', 'o2'], 'no start while another orchestrator holds the lease');
    await c.backend.send(['DEL', c.keys.orchestrator()]);
    t.same(await begin('o1', 'g2'), ['ok', '2', 'g1'], 'epoch 2, the generation kept');
    await c.backend.send(['SET', c.keys.testState(), 'STOPPING']);
    t.same(await end('STOPPING', 2, 'o1'), ['ok', '2']);
    t.equal(await c.backend.send(['EXISTS', c.keys.orchestrator()]), 0, 'its own lease given back');
  });
}
