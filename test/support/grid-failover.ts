// What the two grids' failover tests share, whatever fails over (a Redis
// Cluster's master, or the master Sentinel watches): the grids deployed as
// separate coord processes on each adapter, one failover (master killed -9,
// a replica promoted), and what clients saw around it. Several adapters on
// one Redis go through the same failover side by side.
import { chromium } from 'playwright-core';
import type { Test } from 'tap';
import { coord, type CoordProcess } from './cli.ts';
import type { PageServer } from './page.ts';
import { freePort } from './redis.ts';
import type { Failover } from './redis-ha.ts';
import { ready } from './rig.ts';
import { until } from './until.ts';
import { newSessionBody, w3c } from './webdriver.ts';

/** Redis that can fail over: its URL and the failover (each adapter's deployment has its own prefix). */
export interface HaRedis {
  url: string;
  failover(): Promise<Failover>;
}

/** `coord run --plugin PLUGIN` with these roles on `url`; every process is killed -9 at the test's teardown. */
export function roleStarter(t: Test, plugin: string, url: string, adapter: string, prefix: string): (roles: string[], sets: string[]) => CoordProcess {
  const processes: CoordProcess[] = [];
  t.teardown(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
  });
  return (roles, sets) => {
    const p = coord(['run', '--plugin', plugin, ...roles.flatMap((r) => ['--role', r]), '--redis', url, '--adapter', adapter, '--prefix', prefix, ...sets.flatMap((s) => ['--set', `${plugin}.${s}`])]);
    processes.push(p);
    return p;
  };
}

/** A new session has to be served this soon after the promotion (issue 30's bound). */
// Measured 2.2–11.5 s on CI's loaded 2-core machine (node-redis the slower: its Sentinel client finds the new master
// 1.1–1.4 s after the promotion), 1.7–7.2 s on a quiet one (docs/webdriver.md): the bound leaves room for the loaded case.
export const WEBDRIVER_RECOVERY_MS = 15_000;

/**
 * The WebDriver grid (proxy, manager, orchestrator with a real chromedriver)
 * on each adapter, `prefixes[adapter]` each, through one failover: a new
 * session within WEBDRIVER_RECOVERY_MS of the promotion, and /status never
 * ready while the master was dead, ready again after.
 */
export async function webdriverThroughFailover(t: Test, ha: HaRedis, prefixes: Record<string, string>, page: PageServer): Promise<void> {
  const deployments = await Promise.all(Object.entries(prefixes).map(async ([adapter, prefix]) => {
    const port = await freePort();
    const start = roleStarter(t, 'webdriver', ha.url, adapter, prefix);
    const sets = ['heartbeat.interval=1', 'heartbeat.nodeTtl=4', 'heartbeat.managerTtl=4', 'timeouts.slotReclaimInterval=2'];
    await ready(start(['proxy'], [...sets, `proxy.port=${port}`]), start(['manager'], sets), start(['orchestrator'], [...sets, 'orchestrator.slots=2', 'orchestrator.id=orch-ha']));
    return { adapter, base: `http://127.0.0.1:${port}` };
  }));
  for (const { base } of deployments) {
    const first = await until('a first session', async () => {
      const a = await w3c(base, 'POST', '/session', newSessionBody());
      return a.status === 200 ? a : undefined;
    }, 60_000, 500);
    const firstId = first.body.value!.sessionId!;
    t.equal((await w3c(base, 'POST', `/session/${firstId}/url`, { url: `${page.url}/before` })).status, 200, 'the first session works');
    t.equal((await w3c(base, 'DELETE', `/session/${firstId}`)).status, 200);
    await until('both slots free again', async () => ((await w3c(base, 'GET', '/status')).body.value?.slots as { available?: number } | undefined)?.available === 2, 30_000, 250);
  }

  // /status is read every 250 ms (each read on its own: one may wait 3 s for Redis), from just before the
  // failover until a session is served after it
  let watching = true;
  const watched = deployments.map(({ base }) => {
    const statuses: { at: number; done: number; ready: boolean | undefined; message: string }[] = [];
    const reads: Promise<void>[] = [];
    const loop = (async () => {
      while (watching) {
        const at = Date.now();
        reads.push(fetch(`${base}/status`, { signal: AbortSignal.timeout(5000) })
          .then(async (r) => ((await r.json()) as { value?: { ready?: boolean; message?: string } }).value)
          .catch((error: Error) => ({ ready: undefined, message: `no answer: ${error.message}` }))
          .then((answer) => void statuses.push({ at, done: Date.now(), ready: answer?.ready, message: answer?.message ?? '' })));
        await new Promise((r) => setTimeout(r, 250));
      }
      await Promise.all(reads);
    })();
    return { statuses, loop };
  });

  const failover = await ha.failover();
  t.comment(`killed ${failover.killedPort}, ${failover.promotedPort} promoted ${failover.promotedAt - failover.killedAt} ms later`);
  // clients keep asking, each giving up after 15 s, as a CI job's retry would
  const served = await Promise.all(deployments.map(({ adapter, base }) => until(`${adapter}: a new session after the failover`, async () => {
    const res = await fetch(`${base}/session`, { method: 'POST', body: JSON.stringify(newSessionBody()), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
    if (res?.status !== 200) return undefined;
    return { at: Date.now(), id: ((await res.json()) as { value: { sessionId: string } }).value.sessionId };
  }, 120_000, 250)));
  watching = false;
  await Promise.all(watched.map((w) => w.loop));
  for (const [i, { adapter, base }] of deployments.entries()) {
    const { at, id } = served[i]!;
    const { statuses } = watched[i]!;
    const recoveryMs = at - failover.promotedAt;
    t.comment(`${adapter}: promotion → first new session: ${recoveryMs} ms`);
    t.ok(recoveryMs <= WEBDRIVER_RECOVERY_MS, `${adapter}: a new session within ${WEBDRIVER_RECOVERY_MS} ms of the promotion (${recoveryMs} ms)`);
    t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/after` })).status, 200, `${adapter}: and it works`);
    t.equal((await w3c(base, 'DELETE', `/session/${id}`)).status, 200);
    const notReady = statuses.filter((s) => s.ready !== true);
    t.comment(`${adapter}: /status not ready ${notReady.length} of ${statuses.length} reads: ${[...new Set(notReady.map((s) => s.message))].join(' | ')}`);
    // while the master is dead nothing can be served: every /status read made then says so (a read may wait
    // 3 s for Redis: a promotion sooner than 4 s after the kill, as Sentinel's may be, can leave none wholly within).
    // Dead until the last check that found no promotion: the one that found it may come a second later on a loaded
    // machine, and a read the new master answered meanwhile rightly says ready
    const whileDead = statuses.filter((s) => s.at >= failover.killedAt && s.done <= failover.unpromotedAt);
    if (failover.unpromotedAt - failover.killedAt >= 4000 || whileDead.length) t.ok(whileDead.length > 0, `${adapter}: /status was read while the master was dead (${whileDead.length} reads)`);
    else t.comment(`${adapter}: no /status read was wholly within the ${failover.unpromotedAt - failover.killedAt} ms without a master`);
    t.same(whileDead.filter((s) => s.ready === true), [], `${adapter}: /status never said ready while the master was dead`);
    const again = await until('/status ready again', async () => {
      const s = (await w3c(base, 'GET', '/status')).body.value;
      return s?.ready ? s : undefined;
    }, 30_000, 250);
    t.ok(again.ready, `${adapter}: /status ready again: ${again.message}`);
  }
}

/** Playwright clients connecting at once per deployment, each again as soon as it is done. */
const CLIENTS = 3;

export interface Attempt {
  start: number;
  end: number;
  ok: boolean;
  error?: string;
}

/** 503s, how long from the first one's start to the last one's end, and how long after `from` the last one ended (0s when there were none). */
export function window503(attempts: Attempt[], from: number): { count: number; ms: number; afterMs: number } {
  const failed = attempts.filter((a) => a.error?.includes('503'));
  if (!failed.length) return { count: 0, ms: 0, afterMs: 0 };
  const last = Math.max(...failed.map((a) => a.end));
  return { count: failed.length, ms: last - Math.min(...failed.map((a) => a.start)), afterMs: Math.max(0, last - from) };
}

/** A browser-grid deployment (a worker process with 2 browser servers, a proxy process) on `url`: its proxy's client URL and its processes. */
export async function browserGridDeployment(t: Test, url: string, adapter: string, prefix: string): Promise<{ client: string; processes: CoordProcess[] }> {
  const port = await freePort();
  const start = roleStarter(t, 'browser-grid', url, adapter, prefix);
  const processes = [start(['worker'], ['workers=2', 'heartbeatInterval=1']), start(['proxy'], [`port=${port}`, 'heartbeatInterval=1'])];
  await ready(...processes);
  const client = `ws://127.0.0.1:${port}/?browser=chromium`;
  await until('a first client served', async () => {
    const b = await chromium.connect(client, { timeout: 30_000 }).catch(() => undefined);
    await b?.close();
    return b !== undefined;
  }, 60_000, 500);
  return { client, processes };
}

/**
 * Playwright clients (CLIENTS per deployment) connecting through one failover
 * of `ha`, one deployment per adapter (`prefixes[adapter]`); every attempt of
 * each adapter's clients, until they have been served well past the promotion.
 */
export async function clientsThroughFailover(t: Test, ha: HaRedis, prefixes: Record<string, string>): Promise<{ attempts: Record<string, Attempt[]>; failover: Failover }> {
  const adapters = Object.keys(prefixes);
  const urls = await Promise.all(adapters.map(async (adapter) => (await browserGridDeployment(t, ha.url, adapter, prefixes[adapter]!)).client));
  const attempts: Record<string, Attempt[]> = Object.fromEntries(adapters.map((a) => [a, []]));
  let going = true;
  const loops = adapters.flatMap((adapter, i) => Array.from({ length: CLIENTS }, async () => {
    while (going) {
      const start = Date.now();
      try {
        const browser = await chromium.connect(urls[i]!, { timeout: 30_000 });
        await browser.newContext().then((c) => c.close());
        await browser.close();
        attempts[adapter]!.push({ start, end: Date.now(), ok: true });
      } catch (error) {
        attempts[adapter]!.push({ start, end: Date.now(), ok: false, error: (error as Error).message.split('\n').slice(0, 3).join(' ') });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }));
  await new Promise((r) => setTimeout(r, 2000));
  const failover = await ha.failover();
  // on until every adapter's clients have been served well past the promotion
  await until('clients served after the promotion', () => adapters.every((a) => attempts[a]!.filter((x) => x.ok && x.start > failover.promotedAt + 3000).length >= CLIENTS), 60_000, 100);
  going = false;
  await Promise.all(loops);
  return { attempts, failover };
}

/** Counts and prints one adapter's attempts around a failover: only 503s failed, and clients were served after the promotion. Returns its 503s' time after the promotion. */
export function checkAttempts(t: Test, adapter: string, attempts: Attempt[], failover: Failover): number {
  const { count, ms, afterMs } = window503(attempts, failover.promotedAt);
  const other = attempts.filter((a) => !a.ok && !a.error?.includes('503'));
  t.comment(`${adapter}: killed ${failover.killedPort}, promoted ${failover.promotedAt - failover.killedAt} ms later; ${attempts.length} clients, ${count} got a 503, window ${ms} ms, ${afterMs} ms of it after the promotion; other failures: ${other.length}`);
  if (count) t.comment(`${adapter}: the first 503: ${attempts.find((a) => !a.ok)!.error}`);
  t.same(other.map((a) => a.error), [], `${adapter}: no failure but 503s`);
  t.ok(attempts.some((a) => a.ok && a.start > failover.promotedAt), `${adapter}: clients served after the promotion`);
  return afterMs;
}

/**
 * node-redis's 503s after the promotion end about when ioredis's do (the bug was ~5 s more, then for good). node-redis
 * finds the new master at its next retry (at most 1 s) and then connects, where ioredis is told by the Sentinel: 2 s of
 * slack, and 2 s more for those steps on a loaded machine (3.0 s was seen with another test file beside this one).
 */
export function noLongerThanIoredis(t: Test, windows: Record<string, number>): void {
  const bound = Math.max(windows.ioredis!, 2000) + 2000;
  t.comment(`503s after the promotion: ioredis ${windows.ioredis} ms, node-redis ${windows['node-redis']} ms (bound ${bound} ms)`);
  t.ok(windows['node-redis']! <= bound, `node-redis's 503s after the promotion (${windows['node-redis']} ms) ≤ max(ioredis's, 2 s) + 2 s`);
}
