// The faults a chaos run found, on real Redis with worker and proxy processes:
// Redis restarted empty under held sessions, Redis unreachable for a while,
// churned connects, a browser type with no workers, a recycling server.
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import t from 'tap';
import type { Browser } from 'playwright-core';
import { connect, titleOf } from './support/grid.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const rig = await startPageRig(t, 'browser-grid');
const { redis, backend, page } = rig;

const fast = ['heartbeatInterval=1', 'redisKeyTtl=4', 'staleThreshold=3', 'reaperRunInterval=4', 'shutdownCommandTtl=5'];

const run = (prefix: string, role: string, sets: string[]) => rig.run(role, { prefix, sets: [...fast, ...sets] });
const counters = async (key: string) => {
  const flat = (await backend.send(['HGETALL', key])) as string[];
  return Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, Number(flat[i + 1])]]))) as Record<string, number>;
};
const sum = (o: Record<string, number>) => Object.values(o).reduce((n, v) => n + v, 0);
/** Connects; resolves to the browser or to the error's text. */
const attempt = (port: number, query = '?browser=chromium', timeout = 30_000) => connect(port, query, timeout).catch((e: Error) => e.message);

t.test('Redis restarted empty under 6 held sessions: no over-admission, and a SIGTERM drain still waits for them', async (t) => {
  const port = await freePort();
  const worker = run('{re}:', 'worker', ['workers=2', 'maxConcurrentSessions=5', 'drainTimeout=60']);
  const proxy = run('{re}:', 'proxy', [`port=${port}`, 'maxConcurrentSessions=5', 'queueTimeout=3']);
  await ready(worker, proxy);
  const held = await Promise.all(Array.from({ length: 6 }, () => connect(port)));
  t.equal(sum(await counters('{re}:cluster:active_connections')), 6);

  await redis.restart();
  await until('the proxy restored its 6 leases and the worker re-registered', async () =>
    sum(await counters('{re}:cluster:active_connections')) === 6 && ((await backend.send(['KEYS', '{re}:worker:chromium:*'])) as string[]).length === 2, 15_000);
  t.equal(await backend.send(['HLEN', `{re}:leases:${String((await proxy.waitFor((l) => l.msg.startsWith('proxy listening'))).proxyId)}`]), 6, 'each held session has its lease again');

  const more = await Promise.all(Array.from({ length: 10 }, () => attempt(port)));
  const admitted = more.filter((r): r is Browser => typeof r !== 'string');
  t.equal(admitted.length, 4, 'only the 4 free slots of 2 × 5 are given out');
  t.ok(more.filter((r) => typeof r === 'string').every((e) => /503/.test(e as string)), 'the others get 503 after the queue timeout');
  const active = await counters('{re}:cluster:active_connections');
  t.same(Object.values(active).sort(), [5, 5], 'each server runs its limit, not more');

  worker.kill('SIGTERM');
  await worker.waitFor((l) => l.msg === 'draining');
  await new Promise((r) => setTimeout(r, 2000));
  for (const b of [...held, ...admitted]) t.match(await titleOf(b, page.url), /coord/);
  t.pass('all 10 sessions still work 2 s into the drain');
  t.equal(worker.child.exitCode, null, 'the worker waits for them');
  await Promise.all([...held, ...admitted].map((b) => b.close()));
  t.equal(await worker.exited, 0, 'and exits once they closed');
  proxy.kill('SIGTERM');
  t.equal(await proxy.exited, 0);
});

t.test('Redis down 20 s: connects get 503 within 5 s each, /status says so at once, and clients are served after', async (t) => {
  const port = await freePort();
  const worker = run('{rd}:', 'worker', ['workers=1', 'drainTimeout=5']);
  const proxy = run('{rd}:', 'proxy', [`port=${port}`]);
  await ready(worker, proxy);
  const first = await connect(port);
  t.match(await titleOf(first, page.url), /coord/);
  await first.close();

  await redis.down();
  const downAt = Date.now();
  await proxy.waitFor((l) => l.msg.startsWith('Redis unreachable'), 10_000);
  const statusStarted = Date.now();
  const status = await fetch(`http://127.0.0.1:${port}/status`);
  t.equal(status.status, 503, '/status answers 503');
  // at once: from the proxy's own Redis state, not a Redis command left to time out (3 s: a loaded machine's slack)
  t.ok(Date.now() - statusStarted < 3000, `at once (${Date.now() - statusStarted} ms)`);
  t.equal((await status.json()).redis, 'unreachable');
  let tries = 0;
  while (Date.now() - downAt < 17_000) {
    const started = Date.now();
    const batch = await Promise.all([1, 2, 3].map(() => attempt(port)));
    const took = Date.now() - started;
    t.ok(batch.every((r) => typeof r === 'string' && /503/.test(r)), '503 while Redis is down');
    t.ok(took <= 5000, `answered within 5 s (${took} ms)`);
    tries++;
    await new Promise((r) => setTimeout(r, 1000));
  }
  t.ok(tries >= 3, `${tries} rounds of connects while down`);
  await redis.up();
  const served = await until('a client is served after Redis returned', async () => {
    const r = await attempt(port, '?browser=chromium', 10_000);
    return typeof r === 'string' ? undefined : r;
  }, 20_000, 250);
  t.match(await titleOf(served, page.url), /coord/);
  await served.close();
  await until('its session given back', async () => sum(await counters('{rd}:cluster:active_connections')) === 0, 10_000);
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});

/** Sends a WebSocket upgrade through the proxy and hangs up: at once, or once the answer's head arrived. */
function churn(port: number, waitForAnswer: boolean): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port }, () => {
      socket.write(
        [`GET /?browser=chromium HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'),
      );
      if (!waitForAnswer) socket.destroy();
    });
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(head.slice(0, 12)));
  });
}

t.test('churned connects force no recycle; a browser type with no worker is answered at once', async (t) => {
  const port = await freePort();
  const worker = run('{ch}:', 'worker', ['workers=1', 'maxLifetimeSessions=5', 'maxConcurrentSessions=10']);
  const proxy = run('{ch}:', 'proxy', [`port=${port}`, 'maxLifetimeSessions=5', 'maxConcurrentSessions=10']);
  await ready(worker, proxy);
  const heads: string[] = [];
  for (let round = 0; round < 20; round++) {
    heads.push(...(await Promise.all(Array.from({ length: 10 }, (_v, i) => churn(port, i % 2 === 0)))));
  }
  t.ok(heads.filter((h) => h === 'HTTP/1.1 101').length >= 50, `many churned clients got as far as the upgrade (${heads.filter((h) => h === 'HTTP/1.1 101').length} of 200)`);
  await until('every churned session given back', async () => sum(await counters('{ch}:cluster:active_connections')) === 0, 10_000);
  t.same(Object.values(await counters('{ch}:cluster:lifetime_connections')), [0], 'none of them counts toward the lifetime');
  t.notOk(proxy.lines.some((l) => /lifetime limit/.test(l.msg)), 'no shutdown was sent');
  t.notOk(worker.lines.some((l) => l.msg === 'draining' || l.msg === 'browser server replaced'), 'no browser server recycled');
  const b = await connect(port);
  t.match(await titleOf(b, page.url), /coord/, 'a real client is served and counted');
  await b.close();
  await until('one session in the lifetime count', async () => sum(await counters('{ch}:cluster:lifetime_connections')) === 1, 10_000);

  const started = Date.now();
  const firefox = await attempt(port, '?browser=firefox');
  t.match(firefox, /503/, 'firefox with no firefox worker: 503');
  t.match(firefox, /no firefox worker/);
  t.ok(Date.now() - started < 10_000, `at once (${Date.now() - started} ms), not after the queue timeout (20 s)`);
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});

t.test('a recycling browser server is replaced when its drain begins, not when its last session ends', async (t) => {
  const port = await freePort();
  const opts = ['maxLifetimeSessions=2', 'maxConcurrentSessions=5'];
  const worker = run('{rc}:', 'worker', ['workers=1', 'drainTimeout=60', ...opts]);
  const proxy = run('{rc}:', 'proxy', [`port=${port}`, 'queueTimeout=20', ...opts]);
  await ready(worker, proxy);
  const a = await connect(port);
  const b = await connect(port); // the second session reaches the lifetime limit
  t.match(await titleOf(b, page.url), /coord/);
  await worker.waitFor((l) => l.msg === 'draining', 10_000);
  await worker.waitFor((l) => l.msg === 'browser server replaced', 20_000);
  t.pass('the replacement registered while 2 sessions still run on the draining server');
  const c = await connect(port);
  t.match(await titleOf(c, page.url), /coord/, 'a new client is served meanwhile');
  t.match(await titleOf(a, page.url), /coord/, 'and the old sessions keep working');
  await Promise.all([a, b, c].map((x) => x.close()));
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});
