// The Playwright grid when its one redis-server stalls or goes for good, on
// both adapters side by side (each deployment its own prefix: a worker process
// with 2 Chromium servers, a proxy process), with a Playwright browser open
// on each. A 20 s DEBUG SLEEP (nothing fails over): a client connecting
// during it gets a 503 naming Redis once the proxy's Redis deadline (3 s)
// passes, not a hang; clients are served again within seconds of its end; the
// open browser goes on (the relay needs no Redis). Then Redis killed -9 and
// never back: /status, /readyz and new clients answer 503 naming Redis, at once; the
// processes stay up; the open browser goes on; a SIGTERM then ends each process
// in seconds. Figures printed;
// docs/browser-grid.md has them.
import t, { type Test } from 'tap';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildIfStale } from './support/build.ts';
import type { CoordProcess } from './support/cli.ts';
import { browserGridDeployment } from './support/grid-failover.ts';
import { startPage } from './support/page.ts';
import { startRedis } from './support/redis.ts';
import { debugSleep } from './support/redis-ha.ts';
import { until } from './support/until.ts';

buildIfStale();
const PAUSE_S = 20;
/** How long the proxy waits for one Redis call before it answers 503 (REDIS_CALL_MS, plugins/browser-grid/redis-deadline.ts). */
const REDIS_CALL_MS = 3000;
/** A loaded 2-core machine's slack on every bound below; a hang is the client's own 30 s timeout, not this. */
const SLACK_MS = 7000;

const redis = await startRedis({ args: ['--enable-debug-command', 'yes'] });
const site = await startPage();
t.teardown(async () => {
  await site.close();
  await redis.stop(true);
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Deployment {
  adapter: string;
  url: string;
  /** http://127.0.0.1:PORT of the proxy. */
  base: string;
  processes: CoordProcess[];
  /** The browser open throughout, and its page. */
  browser: Browser;
  page: Page;
}

const deployments: Deployment[] = await Promise.all(['ioredis', 'node-redis'].map(async (adapter, i) => {
  const { client: url, processes } = await browserGridDeployment(t, redis.url, adapter, `{bf${i}}:`);
  const browser = await chromium.connect(url, { timeout: 30_000 });
  return { adapter, url, base: url.replace(/^ws/, 'http').replace(/\/\?.*$/, ''), processes, browser, page: await browser.newPage() };
}));
t.teardown(() => Promise.all(deployments.map((d) => d.browser.close().catch(() => {}))));

/** One client connecting: served (and closed again) or the error it got, and when. */
async function client(d: Deployment): Promise<{ ok: boolean; at: number; end: number; error?: string }> {
  const at = Date.now();
  try {
    const b = await chromium.connect(d.url, { timeout: 30_000 });
    await b.close();
    return { ok: true, at, end: Date.now() };
  } catch (error) {
    return { ok: false, at, end: Date.now(), error: (error as Error).message.split('\n').slice(0, 2).join(' ') };
  }
}

type Done = { ok: boolean; at: number; end: number; what: string };
/** The open browser opens its page at /tag and reads its title. */
async function use(d: Deployment, tag: string): Promise<Done> {
  const at = Date.now();
  try {
    await d.page.goto(`${site.url}/${tag}`, { timeout: 15_000 });
    const title = await d.page.title();
    return { ok: title === `coord /${tag}`, at, end: Date.now(), what: title };
  } catch (error) {
    return { ok: false, at, end: Date.now(), what: (error as Error).message.split('\n')[0]! };
  }
}

/** The open browser used once a second until stop(): each use's outcome. */
function keepBusy(d: Deployment, tag: string): { stop(): Promise<Done[]> } {
  const done: Done[] = [];
  let going = true;
  const loop = (async () => {
    for (let n = 0; going; n++) {
      done.push(await use(d, `${tag}${n}`));
      await sleep(1000);
    }
  })();
  return { stop: async () => ((going = false), await loop, done) };
}

function allWorked(t: Test, d: Deployment, done: Done[], from: number, to: number, what: string): void {
  const within = done.filter((c) => c.at >= from && c.end <= to);
  const failed = done.filter((c) => !c.ok);
  t.comment(`${d.adapter}: the open browser opened ${done.length} pages ${what} (${within.length} wholly within it), ${failed.length} failed, slowest ${Math.max(...done.map((c) => c.end - c.at))} ms`);
  t.ok(within.length > 0, `${d.adapter}: the open browser was used ${what} (${within.length})`);
  t.same(failed.map((c) => c.what), [], `${d.adapter}: every page of the open browser loaded ${what}`);
}

/** GET /status: its code and body. */
async function status(d: Deployment): Promise<{ code: number; body: string; ms: number }> {
  const at = Date.now();
  const res = await fetch(`${d.base}/status`, { signal: AbortSignal.timeout(15_000) });
  return { code: res.status, body: await res.text(), ms: Date.now() - at };
}

t.test(`a ${PAUSE_S} s DEBUG SLEEP: a client connecting during it gets a 503 naming Redis, clients served again within seconds of its end; the open browser goes on`, async (t) => {
  for (const d of deployments) t.ok((await use(d, 'before')).ok, `${d.adapter}: the open browser works`);
  const busy = deployments.map((d) => keepBusy(d, 'paused'));
  const pausedAt = Date.now();
  const woke = debugSleep(redis.port, PAUSE_S).then(() => Date.now());
  await sleep(2000);
  const during = await Promise.all(deployments.map(async (d) => ({ client: await client(d), status: await status(d) })));
  const wokeAt = await woke;
  // clients keep connecting from the pause's end until one is served
  const served = await Promise.all(deployments.map((d) => until(`${d.adapter}: a client served after the pause`, async () => {
    const c = await client(d);
    return c.ok ? c : undefined;
  }, 60_000, 100)));
  const used = await Promise.all(busy.map((b) => b.stop()));
  t.comment(`DEBUG SLEEP ${PAUSE_S}: Redis answered again ${wokeAt - pausedAt} ms after it began`);
  for (const [i, d] of deployments.entries()) {
    const { client: c, status: s } = during[i]!;
    t.comment(`${d.adapter}: a client connecting ${c.at - pausedAt} ms into the pause: ${c.ok ? 'served' : c.error} after ${c.end - c.at} ms`);
    t.notOk(c.ok, `${d.adapter}: not served during the pause`);
    t.match(c.error, /503 Service Unavailable.*Redis/, `${d.adapter}: a 503 naming Redis`);
    t.ok(c.end - c.at <= REDIS_CALL_MS + SLACK_MS, `${d.adapter}: within the proxy's Redis deadline and slack, not a hang (${c.end - c.at} ms)`);
    t.comment(`${d.adapter}: /status during the pause: ${s.code} in ${s.ms} ms: ${s.body.replace(/\s+/g, ' ').slice(0, 200)}`);
    t.equal(s.code, 503, `${d.adapter}: /status during the pause answers 503`);
    t.match(s.body, /Redis/, `${d.adapter}: naming Redis`);
    const after = served[i]!.end - wokeAt;
    t.comment(`${d.adapter}: first client served ${after} ms after the pause ended`);
    t.ok(after <= SLACK_MS, `${d.adapter}: clients served again within ${SLACK_MS} ms of the pause's end (${after} ms)`);
    allWorked(t, d, used[i]!, pausedAt, wokeAt, 'during the pause');
  }
});

t.test('Redis lost for good: /status and new clients answer 503 naming Redis at once; the processes stay up; the open browser goes on', async (t) => {
  const busy = deployments.map((d) => keepBusy(d, 'lost'));
  await redis.down();
  const lostAt = Date.now();
  await Promise.all(deployments.map(async (d, i) => {
    const down = await until(`${d.adapter}: /status says Redis is unreachable`, async () => {
      const s = await status(d);
      return s.code === 503 ? s : undefined;
    }, 60_000, 100);
    t.comment(`${d.adapter}: /status 503 ${Date.now() - lostAt} ms after Redis was killed: ${down.body.replace(/\s+/g, ' ').slice(0, 200)}`);
    t.match(down.body, /Redis/, `${d.adapter}: /status names Redis`);
    t.ok(Date.now() - lostAt <= REDIS_CALL_MS + SLACK_MS, `${d.adapter}: within ${REDIS_CALL_MS + SLACK_MS} ms (${Date.now() - lostAt} ms)`);
    const clients = [];
    for (let n = 0; n < 3; n++) clients.push(await client(d));
    t.comment(`${d.adapter}: clients with Redis gone: ${clients.map((c) => `${c.ok ? 'served' : '503'} in ${c.end - c.at} ms`).join(', ')}; ${clients[0]!.error}`);
    for (const c of clients) {
      t.match(c.error, /503 Service Unavailable.*Redis/, `${d.adapter}: a 503 naming Redis`);
      t.ok(c.end - c.at <= REDIS_CALL_MS + SLACK_MS, `${d.adapter}: at once, not a hang (${c.end - c.at} ms)`);
    }
    await sleep(15_000); // the processes live on with Redis gone
    const again = await status(d);
    t.equal(again.code, 503, `${d.adapter}: the proxy still answers /status, 503 (${again.ms} ms)`);
    const probes = await Promise.all(['/healthz', '/readyz'].map((path) => fetch(d.base + path, { signal: AbortSignal.timeout(15_000) })));
    t.equal(probes[0]!.status, 200, `${d.adapter}: /healthz 200: the process is alive`);
    t.equal(probes[1]!.status, 503, `${d.adapter}: /readyz 503: it cannot serve without Redis`);
    t.match(await probes[1]!.json(), { status: 503, detail: /Redis/ }, `${d.adapter}: a problem naming Redis`);
    await probes[0]!.body?.cancel();
    for (const p of d.processes) t.ok(p.child.exitCode === null && p.child.signalCode === null, `${d.adapter}: pid ${p.child.pid} still runs`);
    allWorked(t, d, await busy[i]!.stop(), lostAt, Date.now(), `in the ${Math.round((Date.now() - lostAt) / 1000)} s since Redis was lost`);
  }));
});

// Redis still gone: a SIGTERM (a rolling restart, a scale-down) ends each process in seconds. The adapters hold
// commands until Redis returns, and the stops deregistered, unsubscribed and removed the proxy unbounded: a proxy
// waited its role's stop timeout (drainTimeout + 30 s, 330 s by default), a worker as long.
t.test('Redis still gone: SIGTERM ends the worker and the proxy in seconds, exit 0', async (t) => {
  await Promise.all(deployments.map((d) => d.browser.close().catch(() => {})));
  await Promise.all(deployments.flatMap((d) => d.processes.map(async (p) => {
    const at = Date.now();
    p.kill('SIGTERM');
    const code = await Promise.race([p.exited, sleep(60_000).then(() => 'still running after 60 s')]);
    const s = (Date.now() - at) / 1000;
    t.comment(`${d.adapter}: pid ${p.child.pid} exited ${code} ${s.toFixed(1)} s after SIGTERM`);
    t.equal(code, 0, `${d.adapter}: pid ${p.child.pid} exits 0`);
    // its stop's Redis steps are bounded by the proxy's Redis deadline (3 s each, four in a worker's drain)
    t.ok(s <= 4 * REDIS_CALL_MS / 1000 + SLACK_MS / 1000, `${d.adapter}: within ${4 * REDIS_CALL_MS / 1000 + SLACK_MS / 1000} s (${s.toFixed(1)} s)`);
  })));
});
