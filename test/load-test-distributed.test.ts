// load-test across real processes on real Redis: an orchestrator and two
// workers started with the built CLI (coord run --plugin load-test --role …).
// Users split round-robin and follow 10 → 20 → 5; a stop during ramp-up stops
// every user within the grace period; a stale-epoch command is ignored; 1000
// resources shared by 50 users on 2 workers are never held twice at once; a
// worker killed -9 is dropped, its users reassigned, and the test still ends.
// Reset stats (POST /api/reset) zeroes what both workers recorded; what they
// send after it is counted exactly.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keyBuilders } from '../core/contract.ts';
import { contract } from '../plugins/load-test/contract.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, root, type CoordProcess } from './support/cli.ts';
import { api, startLoadDeployment } from './support/load.ts';
import { until } from './support/until.ts';

buildIfStale();
const prefix = '{lt}:';
const timing = ['heartbeatInterval=0.3', 'deadAfter=1.5', 'metricsInterval=0.5', 'gracefulStop=2'];
const { redis, backend, target, port, orchestrator, workers } = await startLoadDeployment(t, prefix, timing);
const [workerA, workerB] = workers as [CoordProcess, CoordProcess];
const keys = keyBuilders(contract, prefix);

const members = async (key: string) => ((await backend.send(['SMEMBERS', key])) as string[]).map(Number).sort((a, b) => a - b);
const split = async () => [(await members(keys.workerActiveUsers({ workerId: 'wA' }))).length, (await members(keys.workerActiveUsers({ workerId: 'wB' }))).length];
const fixture = (name: string) => resolve(root, `test/fixtures/load-test/${name}`);

t.test('two workers split the users round-robin and follow 10 → 20 → 5', async (t) => {
  const before = (await target.stats()).total;
  const start = await api(port, 'POST', '/api/start', { scenario: fixture('paced.mjs'), users: 10, spawnRate: 100, params: { baseUrl: target.url } });
  t.equal(start.status, 202, 'started');
  await until('5 users on each worker', async () => (await split()).join() === '5,5', 10_000);
  t.same(await members(keys.workerUsers({ workerId: 'wA' })), [1, 3, 5, 7, 9], 'odd users on the first worker of the snapshot');
  t.same(await members(keys.workerUsers({ workerId: 'wB' })), [2, 4, 6, 8, 10]);

  t.equal((await api(port, 'POST', '/api/users', { users: 20 })).status, 202);
  await until('10 users on each worker', async () => (await split()).join() === '10,10', 10_000);
  t.pass('20 users: 10 running on each worker');

  t.equal((await api(port, 'POST', '/api/users', { users: 5 })).status, 202);
  await until('3 and 2 users', async () => (await split()).join() === '3,2', 10_000);
  t.same(await members(keys.users()), [1, 2, 3, 4, 5], 'the highest ids went first');
  const status = (await api(port, 'GET', '/api/status')).body;
  t.same(status.workers.map((w: { id: string; users: number; active_users: number }) => [w.id, w.users, w.active_users]), [['wA', 3, 3], ['wB', 2, 2]], 'the API shows the split');
  t.ok(status.workers.every((w: { cpu_percent: number; rss_bytes: number }) => w.rss_bytes > 10_000_000 && w.cpu_percent >= 0), 'workers report CPU and current RSS');

  const epoch = Number(await backend.send(['GET', keys.testEpoch()]));
  await backend.send(['XADD', keys.workerCommands({ workerId: 'wA' }), '*', 'type', 'add_user', 'command_id', 'stale-1', 'epoch', epoch - 1, 'sent_at', Date.now() / 1000, 'payload', '{"user_id":99}']);
  await workerA.waitFor((l) => l.msg === 'stale command ignored' && l.commandId === 'stale-1', 5000);
  t.notOk((await members(keys.workerActiveUsers({ workerId: 'wA' }))).includes(99), 'a command of an older epoch is ignored');

  const stopped = await api(port, 'POST', '/api/stop');
  t.equal(stopped.status, 200);
  const served = (await target.stats()).total - before;
  t.equal(stopped.body.total.count, served, `the result counts every request the server saw (${served})`);
  t.equal(stopped.body.peakUsers, 20);
  t.equal(await backend.send(['GET', keys.testState()]), 'IDLE');
});

t.test('every request the workers sent is counted, across processes', async (t) => {
  const before = (await target.stats()).total;
  await api(port, 'POST', '/api/start', { scenario: fixture('paced.mjs'), users: 8, spawnRate: 100, duration: '2s', params: { baseUrl: target.url } });
  await until('the test to end by its duration', async () => (await backend.send(['GET', keys.testState()])) === 'IDLE', 15_000);
  const status = (await api(port, 'GET', '/api/status')).body;
  const served = (await target.stats()).total - before;
  t.equal(status.result.total.count, served, `${status.result.total.count} counted = ${served} served`);
  t.ok(served > 50);
  // the result says which workers took part: each with its host, its users and its share of the requests
  const parts = status.result.workers as { id: string; host: string; users: number; requests: number }[];
  t.same(parts.map((w) => [w.id, w.users]), [['wA', 4], ['wB', 4]], 'both workers, 4 users each');
  t.ok(parts.every((w) => w.host && w.requests > 0), 'each with its host and requests');
  t.equal(parts.reduce((n, w) => n + w.requests, 0), served, 'their requests add up to those served');
});

t.test('reset stats zeroes the results of both workers; what follows is counted exactly', async (t) => {
  await api(port, 'POST', '/api/start', { scenario: fixture('paced.mjs'), users: 8, spawnRate: 100, params: { baseUrl: target.url } });
  await until('4 users on each worker', async () => (await split()).join() === '4,4', 10_000);
  await until('both workers’ requests merged', async () => (await api(port, 'GET', '/api/status')).body.result?.total.count >= 40, 15_000);
  t.equal((await api(port, 'POST', '/api/users', { users: 0 })).status, 202);
  await until('no user running', async () => (await split()).join() === '0,0', 10_000);
  await new Promise((r) => setTimeout(r, 1_500)); // the workers' last batches (metricsInterval 0.5 s) are in
  const before = (await api(port, 'GET', '/api/status')).body.result;
  t.equal((await api(port, 'POST', '/api/reset')).status, 200, `reset (it had ${before.total.count} requests)`);
  const after = (await api(port, 'GET', '/api/status')).body.result;
  t.same([after.total.count, after.total.errors, after.metrics.length, after.errors.length], [0, 0, 0, 0], 'every count of both workers is zero');
  t.ok(after.series.every((p: { rps: number }) => p.rps === 0) && after.series.length <= 2, 'the series starts again');
  t.ok(after.durationS < 5 && before.durationS > after.durationS, `its clock starts again at the reset (${before.durationS.toFixed(1)} s → ${after.durationS.toFixed(1)} s)`);

  const mark = (await target.stats()).total;
  t.equal((await api(port, 'POST', '/api/users', { users: 8 })).status, 202);
  await until('4 users on each worker again', async () => (await split()).join() === '4,4', 10_000);
  await until('more requests', async () => (await target.stats()).total - mark >= 30, 15_000);
  const stopped = await api(port, 'POST', '/api/stop');
  const served = (await target.stats()).total - mark;
  t.equal(stopped.body.total.count, served, `after the reset: ${stopped.body.total.count} counted = ${served} served, from both workers`);
  t.equal((await api(port, 'POST', '/api/reset')).status, 409, 'between tests there is nothing to reset');
});

t.test('a stop during ramp-up stops every user within the grace period', async (t) => {
  await api(port, 'POST', '/api/start', { scenario: fixture('paced.mjs'), users: 200, spawnRate: 20, params: { baseUrl: target.url } });
  await until('ten users running', async () => (await split()).reduce((a, b) => a + b) >= 10, 10_000);
  const users = (await api(port, 'GET', '/api/status')).body.users;
  t.ok(users < 200, `still ramping up: ${users} of 200 users`);
  const stopAt = Date.now();
  const stopped = await api(port, 'POST', '/api/stop');
  const took = Date.now() - stopAt;
  t.equal(stopped.status, 200);
  t.same(await split(), [0, 0], 'no user runs');
  t.ok(took < 2000 + 1500, `stopped in ${took} ms (grace 2000 ms)`);
  const mark = (await target.stats()).now;
  await new Promise((r) => setTimeout(r, 700));
  t.equal((await target.stats(mark)).arrivedSince, 0, 'no request reaches the server after the stop');
  t.ok(stopped.body.peakUsers < 200, `the ramp stopped at ${stopped.body.peakUsers} users`);
});

t.test('1000 resources, 50 users, 2 workers: no resource is ever held by two users at once', async (t) => {
  const before = await target.stats();
  await api(port, 'POST', '/api/start', { scenario: fixture('resources.mjs'), users: 50, spawnRate: 200, duration: '5s', params: { baseUrl: target.url } });
  await until('the test to end', async () => (await backend.send(['GET', keys.testState()])) === 'IDLE', 20_000);
  const after = await target.stats();
  const holds = (after.counts['GET /hold'] ?? 0) - (before.counts['GET /hold'] ?? 0);
  t.ok(holds > 1000, `${holds} holds: the pool went round more than once`);
  t.same(after.doubleHolds, [], 'never held twice at once');
  t.same(after.held, [], 'all given back');
  const result = (await api(port, 'GET', '/api/status')).body.result;
  t.equal(result.errors.length, 0, 'no errors');
});

t.test('coord load run --redis, or a config file that names the Redis, runs a test on the workers registered there', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'coord-load-')), 'deploy.yaml');
  writeFileSync(file, `redis:\n  url: ${redis.url}\n  keyPrefix: '${prefix}'\n`);
  const common = ['--redis', redis.url, '--prefix', prefix, ...timing.flatMap((s) => ['--set', `load-test.${s}`])];
  for (const [how, deployment] of [['--redis', common], ['--config', ['--config', file]]] as const) {
    const before = (await target.stats()).total;
    const r = coordSync(['load', 'run', '--scenario', fixture('paced.mjs'), '--users', '4', '--spawn-rate', '100', '--duration', '1500ms',
      '--param', `baseUrl=${target.url}`, '--out', 'json', ...deployment]);
    t.equal(r.status, 0, r.stderr.slice(-300));
    const result = JSON.parse(r.stdout);
    t.equal(result.total.count, (await target.stats()).total - before, `${how}: requests counted = served`);
    t.equal(result.peakUsers, 4);
    const log = (await backend.send(['XRANGE', keys.timeline(), '-', '+'])) as [string, string[]][];
    t.ok(log.some(([, f]) => f.includes('start') && f.includes(String(result.epoch))), `${how}: the test ran on this deployment`);
    const senders = new Set<string>();
    for (const metricId of (await backend.send(['SMEMBERS', keys.metrics()])) as string[]) {
      for (const [, f] of (await backend.send(['XRANGE', keys.metric({ metricId }), '-', '+'])) as [string, string[]][]) {
        const field = (name: string) => f[f.indexOf(name) + 1];
        if (field('epoch') === String(result.epoch)) senders.add(field('worker')!);
      }
    }
    t.same([...senders].sort(), ['wA', 'wB'], `${how}: the registered workers sent its metrics`);
  }
});

t.test('a worker killed -9 mid-test: dropped, its users reassigned, the test ends cleanly', async (t) => {
  await api(port, 'POST', '/api/start', { scenario: fixture('paced.mjs'), users: 10, spawnRate: 100, params: { baseUrl: target.url } });
  await until('5 users on each worker', async () => (await split()).join() === '5,5', 10_000);
  const killedAt = Date.now();
  workerB.kill('SIGKILL');
  await orchestrator.waitFor((l) => l.msg === 'worker dead: dropped' && l.workerId === 'wB', 10_000);
  const detected = Date.now() - killedAt;
  t.ok(detected < 1500 + 1500, `marked dead ${detected} ms after the kill (deadAfter 1500 ms)`);
  t.equal(await backend.send(['HGET', keys.workerStatus({ workerId: 'wB' }), 'status']), 'dead');
  await until('all 10 users on the surviving worker', async () => (await members(keys.workerActiveUsers({ workerId: 'wA' }))).length === 10, 10_000);
  t.same(await members(keys.workerUsers({ workerId: 'wA' })), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'its users were reassigned with their ids');
  const timeline = (await backend.send(['XRANGE', keys.timeline(), '-', '+'])) as [string, string[]][];
  t.ok(timeline.some(([, f]) => f.includes('worker_dead')), 'the timeline reports it');
  const stopped = await api(port, 'POST', '/api/stop');
  t.equal(stopped.status, 200, 'the test ends');
  t.same(stopped.body.workersLost, ['wB'], 'the result names the lost worker');
  t.equal(await backend.send(['GET', keys.testState()]), 'IDLE');
  t.same(await backend.send(['SMEMBERS', keys.workers()]), ['wA']);
});
