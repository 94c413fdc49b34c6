// load-test when Redis does what HA setups exist for, on real redis-server
// processes, with `coord load run` and a worker as processes of the built CLI,
// on both adapters side by side (each deployment its own prefix and route at
// the target): a Cluster master killed -9 and its replica promoted, a
// Sentinel failover, a 20 s DEBUG SLEEP, and Redis lost for good. What a load tool must never do: report
// fewer requests than the target saw and exit 0, or keep firing once nobody
// can stop it.
import t, { type Test } from 'tap';
import { resolve } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { coord, root, type CoordProcess } from './support/cli.ts';
import { startTarget } from './support/load.ts';
import { startRedis } from './support/redis.ts';
import { debugSleep, startHaCluster, startSentinels, type Failover } from './support/redis-ha.ts';
import { until } from './support/until.ts';

buildIfStale();
const adapters = ['ioredis', 'node-redis'] as const;
type Adapter = (typeof adapters)[number];
const scenario = resolve(root, 'test/fixtures/load-test/routed.mjs');
const target = await startTarget({ own: true });
t.teardown(() => target.close());

const processes: CoordProcess[] = [];
t.teardown(() => processes.forEach((p) => p.kill('SIGKILL')));

interface Deployment {
  adapter: Adapter;
  route: string;
  worker: CoordProcess;
  run: CoordProcess;
}

/** A worker, then `coord load run` with 10 users (~100 requests/s) on `url`, for `durationS`. */
async function deploy(url: string, adapter: Adapter, prefix: string, durationS: number, sets: string[] = []): Promise<Deployment> {
  const route = `r-${prefix.replace(/\W/g, '')}-${adapter}`;
  const common = ['--redis', url, '--adapter', adapter, '--prefix', prefix, ...sets.flatMap((s) => ['--set', `load-test.${s}`])];
  const worker = coord(['run', '--plugin', 'load-test', '--role', 'worker', ...common, '--set', `load-test.workerId=w-${route}`]);
  processes.push(worker);
  await worker.waitFor((l) => l.msg === 'worker registered');
  const run = coord(['load', 'run', '--scenario', scenario, '--users', '10', '--duration', `${durationS}s`, '--param', `baseUrl=${target.url}`,
    '--param', `route=${route}`, '--out', 'json', ...common]);
  processes.push(run);
  return { adapter, route, worker, run };
}

const seen = async (d: Deployment) => (await target.stats()).counts[`GET /${d.route}`] ?? 0;
const firstRequests = (d: Deployment) => until(`${d.adapter}: requests at the target`, async () => (await seen(d)) > 20, 60_000);

interface Outcome {
  code: number | null;
  result: { total: { count: number; aborted: number }; workersLost: string[]; incomplete?: { unaccounted: number; reasons: string[] } };
  reported: number;
  served: number;
}

async function outcome(d: Deployment): Promise<Outcome> {
  const code = await d.run.exited;
  // The result is the block from a line '{' to a line '}' (log lines, one JSON object each, may come around it).
  const lines = d.run.stdout().split('\n');
  const from = lines.indexOf('{');
  const stdout = lines.slice(from, lines.indexOf('}', from) + 1).join('\n');
  let result: Outcome['result'];
  try {
    result = JSON.parse(stdout) as Outcome['result'];
  } catch {
    throw new Error(`${d.adapter}: coord load run printed no JSON result (exit ${code}); stderr: ${d.run.stderr().slice(-800)}`);
  }
  return { code, result, reported: result.total.count + result.total.aborted, served: await seen(d) };
}

/** Either every request the target saw is in the results and the run exited 0, or the gap is named and the exit is 98. */
function accounted(t: Test, d: Deployment, o: Outcome): void {
  if (o.code === 0) {
    t.equal(o.reported, o.served, `${d.adapter}: exit 0 and every request the target saw is reported (${o.reported} of ${o.served})`);
    t.notOk(o.result.incomplete, `${d.adapter}: not marked incomplete`);
  } else {
    t.equal(o.code, 98, `${d.adapter}: exit 98 (incomplete), ${o.reported} of ${o.served} reported; stderr: ${d.run.stderr().slice(-400)}`);
    t.ok(o.result.incomplete?.reasons.length, `${d.adapter}: the result says what is missing: ${o.result.incomplete?.reasons.join('; ')}`);
    t.match(d.run.stderr(), /INCOMPLETE results/, `${d.adapter}: and stderr says so`);
  }
  t.ok(o.reported <= o.served, `${d.adapter}: nothing counted twice (${o.reported} reported, ${o.served} served)`);
}

/** After the run's end the target hears nothing more from its users. */
async function quietAfter(t: Test, d: Deployment): Promise<void> {
  const at = await seen(d);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(await seen(d), at, `${d.adapter}: no request after the run ended`);
}

/**
 * Both adapters' deployments (a prefix each) through one failover: counts exact or the gap named, the worker
 * neither taken for dead nor dropping its users, nothing sent after the run's end.
 */
async function ridesThrough(t: Test, url: string, prefixes: [string, string], failover: () => Promise<Failover>): Promise<void> {
  const runs = [await deploy(url, 'ioredis', prefixes[0], 14), await deploy(url, 'node-redis', prefixes[1], 14)];
  await Promise.all(runs.map(firstRequests));
  await new Promise((r) => setTimeout(r, 2000));
  const { promotedPort, promotedAt, killedAt } = await failover();
  t.comment(`promoted ${promotedPort} ${promotedAt - killedAt} ms after the kill`);
  for (const d of runs) {
    const o = await outcome(d);
    t.comment(`${d.adapter}: exit ${o.code}, reported ${o.reported}, target saw ${o.served}${o.result.incomplete ? `, incomplete: ${o.result.incomplete.reasons.join('; ')}` : ''}`);
    accounted(t, d, o);
    t.same(o.result.workersLost, [], `${d.adapter}: the worker was not taken for dead`);
    t.notOk(d.worker.lines.some((l) => l.msg === 'dropped by the orchestrator while running a test: stopping its users'), `${d.adapter}: the worker kept its users`);
    await quietAfter(t, d);
  }
}

t.test('Cluster failover (the deployment\'s master killed -9, its replica promoted): counts exact or the gap named; the worker stays the same worker', async (t) => {
  const cluster = await startHaCluster();
  t.teardown(() => cluster.stop());
  // Two hash tags on the same master: one failover hits both deployments.
  const first = '{lt0}:';
  const master = cluster.masterOf(first);
  let second = '';
  for (let i = 1; !second; i++) if (cluster.masterOf(`{lt${i}}:`) === master) second = `{lt${i}}:`;
  await ridesThrough(t, cluster.url, [first, second], () => cluster.failover(first));
});

t.test('Sentinel failover (the master killed -9, the sentinels promote its replica): counts exact or the gap named; the worker stays the same worker', async (t) => {
  const sentinels = await startSentinels();
  t.teardown(() => sentinels.stop());
  await ridesThrough(t, sentinels.url, ['{ls}:', '{lt}:'], () => sentinels.failover());
});

t.test('a 20 s DEBUG SLEEP mid-test (shorter than redisLostAfter): the test goes on, counts exact or the gap named', async (t) => {
  const redis = await startRedis({ args: ['--enable-debug-command', 'yes'] });
  t.teardown(() => redis.stop(true));
  const runs = [await deploy(redis.url, 'ioredis', '{lp}:', 28), await deploy(redis.url, 'node-redis', '{lq}:', 28)];
  await Promise.all(runs.map(firstRequests));
  await debugSleep(redis.port, 20);
  for (const d of runs) {
    const o = await outcome(d);
    t.comment(`${d.adapter}: exit ${o.code}, reported ${o.reported}, target saw ${o.served}`);
    accounted(t, d, o);
    t.same(o.result.workersLost, [], `${d.adapter}: the worker was not taken for dead`);
    t.ok(d.worker.lines.some((l) => String(l.msg).startsWith('Redis does not answer')), `${d.adapter}: the worker said at once that Redis did not answer`);
    await quietAfter(t, d);
  }
});

t.test('Redis lost for good mid-test: every worker stops its users within redisLostAfter, the run exits 98 with what it read; SIGTERM ends a run at once', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop(true));
  const lostAfterS = 5;
  const sets = [`redisLostAfter=${lostAfterS}`];
  const waiting = [await deploy(redis.url, 'ioredis', '{lw}:', 60, sets), await deploy(redis.url, 'node-redis', '{lx}:', 60, sets)];
  const signalled = [await deploy(redis.url, 'ioredis', '{ly}:', 60, sets), await deploy(redis.url, 'node-redis', '{lz}:', 60, sets)];
  await Promise.all([...waiting, ...signalled].map(firstRequests));
  await redis.down();
  const killedAt = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  for (const d of signalled) {
    const signalAt = performance.now();
    d.run.kill('SIGTERM');
    const code = await d.run.exited;
    const tookMs = performance.now() - signalAt;
    t.comment(`${d.adapter}: SIGTERM with Redis gone: exit ${code} after ${Math.round(tookMs)} ms`);
    t.equal(code, 143, `${d.adapter}: SIGTERM with Redis gone exits 143`);
    // The promise is 1 s; 4 s on a loaded 2-core machine still rules out waiting on Redis (the run would wait forever).
    t.ok(tookMs < 4000, `${d.adapter}: and at once (${Math.round(tookMs)} ms)`);
  }
  for (const d of waiting) {
    const o = await outcome(d);
    const tookS = (performance.now() - killedAt) / 1000;
    t.comment(`${d.adapter}: exit ${o.code} ${tookS.toFixed(1)} s after Redis was killed; reported ${o.reported} of ${o.served} served; ${o.result.incomplete?.reasons.join('; ')}`);
    t.equal(o.code, 98, `${d.adapter}: the run exits 98`);
    t.ok(tookS < lostAfterS + 15, `${d.adapter}: within redisLostAfter and a margin (${tookS.toFixed(1)} s)`);
    t.ok(o.result.incomplete?.reasons.some((r) => /Redis has not answered/.test(r)), `${d.adapter}: the result says Redis was lost`);
    t.ok(o.reported > 0 && o.reported <= o.served, `${d.adapter}: with the results it read (${o.reported} of ${o.served})`);
  }
  // Every worker (the signalled runs' too) stops its own users by itself: the target hears nothing more.
  for (const d of [...waiting, ...signalled]) await d.worker.waitFor((l) => /stopping this worker's users/.test(String(l.msg)), 30_000);
  const asked = performance.now();
  const stats = await target.stats();
  const killedAtTarget = killedAt + (stats.now - asked); // the target's clock is its own process's
  for (const d of [...waiting, ...signalled]) {
    const lastS = (stats.lastAt[`GET /${d.route}`]! - killedAtTarget) / 1000;
    t.comment(`${d.adapter} (${d.route}): last request ${lastS.toFixed(1)} s after Redis was killed`);
    t.ok(lastS < lostAfterS + 5, `${d.adapter}: no request later than redisLostAfter and a heartbeat after Redis was lost (${lastS.toFixed(1)} s)`);
    t.ok(d.worker.lines.some((l) => String(l.msg).startsWith('Redis does not answer: this worker stops the users')), `${d.adapter}: the worker said at once that it would stop`);
    await quietAfter(t, d);
  }
});

t.test('the orchestrator killed -9 with Redis healthy: a worker stops its users by itself at the planned end + gracefulStop + 10 s', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop(true));
  const d = await deploy(redis.url, 'ioredis', '{lk}:', 3, ['gracefulStop=1']);
  await firstRequests(d);
  const firstAt = performance.now();
  d.run.kill('SIGKILL'); // nobody will send stop_test
  await d.worker.waitFor((l) => /the test's planned end and 11 s have passed with no stop_test/.test(String(l.msg)), 40_000);
  const stoppedS = (performance.now() - firstAt) / 1000;
  t.comment(`the worker stopped its users ${stoppedS.toFixed(1)} s after its first requests (planned 3 s + 1 s + 10 s)`);
  t.ok(stoppedS >= 12, `not before the planned end and its grace (${stoppedS.toFixed(1)} s)`);
  t.ok(stoppedS < 30, `and within a few heartbeats of it (${stoppedS.toFixed(1)} s)`);
  await quietAfter(t, d);
});
