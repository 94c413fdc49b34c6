// The browser grid as separate coord processes on real Redis, and the faults
// operators meet: a worker or a proxy killed -9, Redis restarted, bad timing config.
import t from 'tap';
import { coordSync, type CoordProcess } from './support/cli.ts';
import { connect, titleOf } from './support/grid.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const rig = await startPageRig(t, 'browser-grid');
const { redis, backend, page } = rig;

const fast = ['heartbeatInterval=1', 'redisKeyTtl=4', 'staleThreshold=3', 'reaperRunInterval=4', 'shutdownCommandTtl=5', 'drainTimeout=5'];

const run = (prefix: string, role: string, sets: string[], env: Record<string, string> = {}) => rig.run(role, { prefix, sets: [...fast, ...sets], env });
const hgetall = async (key: string) => {
  const flat = (await backend.send(['HGETALL', key])) as string[];
  return Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]]])));
};

t.test('one proxy and two worker processes: 20 parallel clients, the 5th of 4 slots waits, a full queue answers 429', async (t) => {
  const port = await freePort();
  const env = { MAX_CONCURRENT_SESSIONS: '2' };
  const workers = [run('{mp}:', 'worker', ['workers=1'], env), run('{mp}:', 'worker', ['workers=1'], env)];
  const proxy = run('{mp}:', 'proxy', [`port=${port}`, 'queueSize=20', 'queueTimeout=60'], env);
  await ready(...workers, proxy);

  const titles = await Promise.all(
    Array.from({ length: 20 }, async (_v, i) => {
      const b = await connect(port);
      try {
        return await titleOf(b, `${page.url}/p${i}`);
      } finally {
        await b.close();
      }
    }),
  );
  t.same(titles, Array.from({ length: 20 }, (_v, i) => `coord /p${i}`), '20 clients, each a working browser');

  const held = await Promise.all([1, 2, 3, 4].map(() => connect(port)));
  let fifthDone = false;
  const fifth = connect(port).then((b) => ((fifthDone = true), b));
  await new Promise((r) => setTimeout(r, 1500));
  t.notOk(fifthDone, '5th client waits while 2 workers × 2 sessions are busy');
  await held[0]!.close();
  const b5 = await fifth;
  t.match(await titleOf(b5, page.url), /coord/, 'and gets a browser when one frees');
  await Promise.all([b5, ...held.slice(1)].map((b) => b.close()));

  proxy.kill('SIGTERM');
  t.equal(await proxy.exited, 0, 'SIGTERM: the proxy drains and exits 0');
  const small = run('{mp}:', 'proxy', [`port=${port}`, 'queueSize=1', 'queueTimeout=30'], env);
  await ready(small);
  const again = await Promise.all([1, 2, 3, 4].map(() => connect(port)));
  const queued = connect(port);
  await new Promise((r) => setTimeout(r, 500));
  await t.rejects(connect(port, '?browser=chromium', 10_000), /429/, 'queue full → 429');
  await again[0]!.close();
  await (await queued).close();
  await Promise.all(again.slice(1).map((b) => b.close()));
  for (const p of [...workers, small]) p.kill('SIGTERM');
  t.same(await Promise.all([...workers, small].map((p) => p.exited)), [0, 0, 0]);
});

t.test('a worker killed -9 is never selected again and is reaped', async (t) => {
  const port = await freePort();
  const a = run('{kw}:', 'worker', ['workers=1']);
  const b = run('{kw}:', 'worker', ['workers=1']);
  const proxy = run('{kw}:', 'proxy', [`port=${port}`]);
  await ready(a, b, proxy);
  const idOf = async (p: CoordProcess) => String((await p.waitFor((l) => l.msg === 'browser server registered')).workerId);
  const deadId = await idOf(a);
  a.kill('SIGKILL');
  await a.exited;
  await new Promise((r) => setTimeout(r, 3500)); // past the stale threshold
  for (let i = 0; i < 6; i++) {
    const client = await connect(port);
    t.match(await titleOf(client, page.url), /coord/);
    await client.close();
  }
  const lifetime = await hgetall('{kw}:cluster:lifetime_connections');
  t.notOk(Number(lifetime[`chromium:${deadId}`] ?? 0) > 0, 'no session went to the dead worker');
  await until('dead worker reaped', async () => (await backend.send(['EXISTS', `{kw}:worker:chromium:${deadId}`])) === 0 && !(`chromium:${deadId}` in (await hgetall('{kw}:cluster:active_connections'))), 15_000);
  t.pass('its record and counter fields are gone');
  for (const p of [b, proxy]) p.kill('SIGTERM');
  await Promise.all([b, proxy].map((p) => p.exited));
});

t.test('a proxy killed -9 leaks no capacity: its sessions are given back by the reaper', async (t) => {
  const port1 = await freePort();
  const port2 = await freePort();
  const worker = run('{kp}:', 'worker', ['workers=1', 'maxConcurrentSessions=3']);
  const doomed = run('{kp}:', 'proxy', [`port=${port1}`, 'reaperInProxy=false']);
  const survivor = run('{kp}:', 'proxy', [`port=${port2}`]);
  await ready(worker, doomed, survivor);
  const clients = await Promise.all([1, 2].map(() => connect(port1)));
  const active = async () => Object.values(await hgetall('{kp}:cluster:active_connections')).reduce((n, v) => n + Number(v), 0);
  t.equal(await active(), 2);
  doomed.kill('SIGKILL');
  await doomed.exited;
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  t.equal(await active(), 2, 'the dead proxy could not give its sessions back');
  await until('counts repaired', async () => (await active()) === 0, 15_000);
  t.pass('the surviving proxy\'s reaper returned both leases');
  const c = await connect(port2);
  t.match(await titleOf(c, page.url), /coord/);
  await c.close();
  for (const p of [worker, survivor]) p.kill('SIGTERM');
  await Promise.all([worker, survivor].map((p) => p.exited));
});

t.test('Redis restarted: workers re-register within one heartbeat and clients are served', async (t) => {
  const port = await freePort();
  const worker = run('{rr}:', 'worker', ['workers=1']);
  const proxy = run('{rr}:', 'proxy', [`port=${port}`]);
  await ready(worker, proxy);
  const runId = async () => /run_id:(\w+)/.exec(String(await backend.send(['INFO', 'server'])))?.[1];
  const before = await runId();
  await redis.restart();
  const started = Date.now();
  t.not(await runId(), before, 'a new Redis process, started empty');
  await until('worker back', async () => ((await backend.send(['KEYS', '{rr}:worker:chromium:*'])) as string[]).length === 1, 5000);
  t.ok(Date.now() - started < 2500, `re-registered ${Date.now() - started} ms after the restart`);
  // the proxy answers 503 (Retry-After) until its own connection is back and its leases restored
  const c = await until('a client served', () => connect(port, '?browser=chromium', 10_000).catch(() => undefined), 15_000, 200);
  t.ok(Date.now() - started < 10_000, `served ${Date.now() - started} ms after the restart`);
  t.match(await titleOf(c, page.url), /coord/);
  await c.close();
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});

t.test('coord grid status prints the grid as tables', async (t) => {
  const worker = run('{gs}:', 'worker', ['workers=2']);
  await ready(worker);
  const r = coordSync(['grid', 'status', '--redis', redis.url, '--prefix', '{gs}:']);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /browser\s+workers\s+available\s+draining\s+stale\s+active\s+free\s+queued/);
  t.match(r.stdout, /chromium\s+2\s+2\s+0\s+0\s+0\s+10\s+0/, '2 workers × 5 sessions free');
  t.equal(r.stdout.match(/chromium:[0-9a-f-]{36}\s+available/g)?.length, 2, 'one row per worker');
  const json = JSON.parse(coordSync(['grid', 'status', '--json', '--redis', redis.url, '--prefix', '{gs}:']).stdout);
  t.equal(json.types.chromium.workers, 2);
  worker.kill('SIGTERM');
  t.equal(await worker.exited, 0);
});

t.test('bad timing config: one clear line, exit 2, nothing started', async (t) => {
  const r = coordSync(['run', '--plugin', 'browser-grid', '--redis', redis.url], { HEARTBEAT_INTERVAL: '10', REDIS_KEY_TTL: '5' });
  t.equal(r.status, 2);
  const lines = r.stderr.trim().split('\n');
  t.equal(lines.length, 1, r.stderr);
  t.match(lines[0], /redisKeyTtl \(5s\) must be greater than heartbeatInterval \(10s\)/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
