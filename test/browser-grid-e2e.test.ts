// The browser grid end to end on real Redis and real Chromium: Playwright
// clients connect through the proxy, queue when the grid is full, and workers
// recycle at their lifetime limit.
import t from 'tap';
import type { Browser } from 'playwright-core';
import { connect, startGrid, startPageServer, titleOf, type GridProcess } from './support/grid.ts';
import { freePort, startRedis } from './support/redis.ts';

const redis = await startRedis();
const page = await startPageServer();
const fast = { heartbeatInterval: 1, redisKeyTtl: 5, staleThreshold: 3, reaperRunInterval: 4, shutdownCommandTtl: 5, drainTimeout: 10 };
const grids: GridProcess[] = [];
t.teardown(async () => {
  for (const g of grids.reverse()) await g.handle.stop('test done');
  await page.close();
  await redis.stop();
});

async function grid(prefix: string, options: Record<string, unknown>, roles: string[]) {
  const g = await startGrid({ redis: redis.url, prefix, roles, options: { ...fast, ...options } });
  grids.push(g);
  return g;
}

t.test('status codes: 426 for plain HTTP, 404 unknown path, 400 unknown browser', async (t) => {
  const port = await freePort();
  await grid('{codes}:', { port, workers: 1 }, ['proxy']);
  const plain = await fetch(`http://127.0.0.1:${port}/`);
  t.equal(plain.status, 426);
  t.equal((await fetch(`http://127.0.0.1:${port}/nope`)).status, 404);
  await t.rejects(connect(port, '?browser=opera', 5000), /400/);
  await t.rejects(connect(port, 'x/y?browser=chromium', 5000), /404/);
  const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { types: Record<string, unknown> };
  t.ok(status.types.chromium, '/status answers with per-type totals');
});

t.test('with 2 workers × 2 sessions the 5th client waits, the 6th gets 429, and the 5th is served when one closes', async (t) => {
  const port = await freePort();
  const options = { port, workers: 2, maxConcurrentSessions: 2, queueSize: 1, queueTimeout: 30 };
  await grid('{queue}:', options, ['worker']);
  await grid('{queue}:', options, ['proxy']);
  const first = await Promise.all([1, 2, 3, 4].map(() => connect(port)));
  for (const b of first) t.match(await titleOf(b, `${page.url}/x`), /coord/);
  let fifthReady = false;
  const fifth = connect(port).then((b) => ((fifthReady = true), b));
  await new Promise((r) => setTimeout(r, 1500));
  t.notOk(fifthReady, 'the 5th client is waiting');
  await t.rejects(connect(port, '?browser=chromium', 10_000), /429/, 'the queue holds one: the 6th is refused');
  const closedAt = Date.now();
  await first[0]!.close();
  const fifthBrowser = await fifth;
  t.ok(Date.now() - closedAt < 3000, `served ${Date.now() - closedAt} ms after a session closed (not by polling)`);
  t.match(await titleOf(fifthBrowser, `${page.url}/fifth`), /coord \/fifth/);
  await Promise.all([fifthBrowser, ...first.slice(1)].map((b) => b.close()));
});

t.test('20 clients in parallel each get a working browser', async (t) => {
  const port = await freePort();
  // Heartbeats may come late while 20 browsers start on a loaded machine: a 3 s stale threshold would take the busy
  // workers (and their Playwright version) for gone and refuse clients with 428, as seen once in CI.
  const options = { port, workers: 2, maxConcurrentSessions: 5, queueSize: 20, queueTimeout: 60, staleThreshold: 20, redisKeyTtl: 30, reaperRunInterval: 40 };
  await grid('{many}:', options, ['worker', 'proxy']);
  const titles = await Promise.all(
    Array.from({ length: 20 }, async (_v, i) => {
      const browser: Browser = await connect(port);
      try {
        return await titleOf(browser, `${page.url}/c${i}`);
      } finally {
        await browser.close();
      }
    }),
  );
  t.same(titles, Array.from({ length: 20 }, (_v, i) => `coord /c${i}`));
});

t.test('a worker reaching its lifetime limit drains and is replaced under a new id', async (t) => {
  const port = await freePort();
  const g = await grid('{life}:', { port, workers: 1, maxLifetimeSessions: 2 }, ['worker', 'proxy']);
  const registered = () => g.logs.filter((l) => l.msg === 'browser server registered').map((l) => String(l.fields.workerId));
  t.equal(registered().length, 1);
  for (let i = 0; i < 2; i++) {
    const b = await connect(port);
    await titleOf(b, page.url);
    await b.close();
  }
  const deadline = Date.now() + 20_000;
  while (registered().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  const ids = registered();
  t.equal(ids.length, 2, 'a second browser server registered');
  t.not(ids[0], ids[1], 'under a new id');
  t.ok(g.logs.some((l) => l.msg === 'draining' && l.fields.reason === 'shutdown command'), 'the old one drained on the shutdown command');
  const b = await connect(port);
  t.match(await titleOf(b, page.url), /coord/, 'the replacement serves');
  await b.close();
});

t.test('token auth: clients without the token get 401, with it a browser', async (t) => {
  const port = await freePort();
  await grid('{token}:', { port, workers: 1, token: 'sekret' }, ['worker', 'proxy']);
  await t.rejects(connect(port, '?browser=chromium', 5000), /401/);
  t.equal((await fetch(`http://127.0.0.1:${port}/status`)).status, 401, '/status needs it too');
  const b = await connect(port, '?browser=chromium&token=sekret');
  t.match(await titleOf(b, page.url), /coord/);
  await b.close();
  const bearer = await fetch(`http://127.0.0.1:${port}/status`, { headers: { authorization: 'Bearer sekret' } });
  t.equal(bearer.status, 200, 'Authorization: Bearer works');
});

t.test('/metrics counts relayed sessions in Prometheus text', async (t) => {
  const port = await freePort();
  await grid('{metrics}:', { port, workers: 1 }, ['worker', 'proxy']);
  for (let i = 0; i < 2; i++) {
    const b = await connect(port);
    await b.close();
  }
  const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  t.match(await metrics(), /coord_grid_connections_total\{browser="chromium",result="relayed"\} 2/);
  // the relay ends a moment after the client's close
  let text = await metrics();
  for (let i = 0; i < 20 && !/coord_grid_relays_active 0/.test(text); i++) text = await new Promise((r) => setTimeout(r, 100)).then(metrics);
  t.match(text, /coord_grid_relays_active 0/);
});

t.test('a playwright-distributed worker record (endpoint, ms heartbeat) is adopted and served', async (t) => {
  const { launchBrowserServer } = await import('../plugins/browser-grid/worker/browser.ts');
  const { createBackend } = await import('../adapters/index.ts');
  const server = await launchBrowserServer({ browserType: 'chromium', host: '127.0.0.1', args: [] });
  const backend = await createBackend({ url: redis.url });
  const key = '{mixed}:worker:chromium:pd-1';
  const beat = async () => {
    await backend.send(['HSET', key, 'id', 'pd-1', 'browserType', 'chromium', 'endpoint', server.wsEndpoint(), 'status', 'available', 'lastHeartbeat', Date.now(), 'startedAt', Date.now()]);
    await backend.send(['EXPIRE', key, 60]);
    await backend.send(['HSETNX', '{mixed}:cluster:active_connections', 'chromium:pd-1', 0]);
    await backend.send(['HSETNX', '{mixed}:cluster:lifetime_connections', 'chromium:pd-1', 0]);
  };
  await beat();
  let beating = Promise.resolve();
  const timer = setInterval(() => (beating = beat()), 1000);
  t.teardown(async () => {
    clearInterval(timer);
    await beating; // a beat in flight when the backend closes would reject unheard
    await backend.close();
    await server.close();
  });
  const port = await freePort();
  await grid('{mixed}:', { port, queueTimeout: 10 }, ['proxy']);
  const b = await connect(port);
  t.match(await titleOf(b, `${page.url}/mixed`), /coord \/mixed/, 'served by the foreign worker');
  await b.close();
  t.equal(await backend.send(['HGET', '{mixed}:cluster:lifetime_connections', 'chromium:pd-1']), '1', 'its counters are kept playwright-distributed\'s way');
});

t.test('adoptForeignWorkers: false: a foreign worker record is left alone', async (t) => {
  const { createBackend } = await import('../adapters/index.ts');
  const backend = await createBackend({ url: redis.url });
  t.teardown(() => backend.close());
  const key = '{alone}:worker:chromium:pd-2';
  await backend.send(['HSET', key, 'id', 'pd-2', 'browserType', 'chromium', 'endpoint', 'ws://127.0.0.1:1/x', 'status', 'available', 'lastHeartbeat', Date.now()]);
  const port = await freePort();
  await grid('{alone}:', { port, heartbeatInterval: 0.2, adoptForeignWorkers: false }, ['proxy']);
  await new Promise((r) => setTimeout(r, 1000)); // five heartbeats: adoption would have run twice
  t.equal(await backend.send(['ZSCORE', '{alone}:index:workers:chromium', 'chromium:pd-2']), null, 'not indexed');
  const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { workers: unknown[] };
  t.equal(status.workers.length, 0, 'not listed');
});
