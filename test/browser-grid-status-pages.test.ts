// /status a page at a time, its totals over the whole grid counted inside Redis
// (tallyWorkers.lua), and /v1/capacity from those totals alone. 25 workers,
// written with the plugin's own touchWorker as a worker writes them, in every
// state a total tells apart: available with 0 to 3 sessions open (at most 2
// each), draining, shutting down, stale (a heartbeat in seconds, as
// playwright-distributed's layout keeps it, or in ms), of two browser types;
// on a real redis-server (and the embedded backend), read by gridStatus and
// through a real proxy process.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../entries/plugin.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import type { Ctx } from '../plugins/browser-grid/context.ts';
import plugin from '../plugins/browser-grid/index.ts';
import { touchWorker } from '../plugins/browser-grid/scripts.ts';
import { gridStatus, type GridStatus } from '../plugins/browser-grid/status.ts';
import { coord, coordSync } from './support/cli.ts';
import { freePort, startRedis } from './support/redis.ts';

const MAX = 2;
const STALE_S = 15;
const redis = await startRedis();
t.teardown(() => redis.stop());
const backend = await createBackend({ url: redis.url });
t.teardown(() => backend.close());

interface Spec { type: 'chromium' | 'firefox'; status: string; active: number; beatAgeS: number; seconds?: boolean }
const fleet: Spec[] = [
  ...[0, 1, 2, 3, 0, 1, 2, 0, 1, 0].map((active) => ({ type: 'chromium' as const, status: 'available', active, beatAgeS: 1 })),
  ...[1, 0, 2].map((active) => ({ type: 'chromium' as const, status: 'draining', active, beatAgeS: 2 })),
  ...[0, 1].map((active) => ({ type: 'chromium' as const, status: 'shutting-down', active, beatAgeS: 0 })),
  ...[0, 2, 1, 0].map((active, i) => ({ type: 'chromium' as const, status: 'available', active, beatAgeS: 60, seconds: i % 2 === 0 })),
  ...[0, 1, 2].map((active) => ({ type: 'firefox' as const, status: 'available', active, beatAgeS: 3, seconds: true })),
  ...[1, 0, 0].map((active) => ({ type: 'firefox' as const, status: 'draining', active, beatAgeS: 100 })),
];

/** The totals `fleet` should give, counted here the plain way. */
function expectedTotals(type: string) {
  const mine = fleet.filter((w) => w.type === type);
  const live = mine.filter((w) => w.beatAgeS <= STALE_S);
  const available = live.filter((w) => w.status === 'available');
  return {
    workers: mine.length,
    available: available.length,
    draining: live.length - available.length,
    stale: mine.length - live.length,
    active: mine.reduce((n, w) => n + w.active, 0),
    free: available.reduce((n, w) => n + Math.max(0, MAX - w.active), 0),
  };
}

/** Writes `fleet` under `prefix` as workers do: touchWorker with a worker's fields, then its open sessions. */
async function writeFleet(prefix: string, on: Backend = backend): Promise<{ ctx: Ctx; refs: string[] }> {
  const ctx = scenarioContext({ plugin, backend: on, keyPrefix: prefix, signal: new AbortController().signal, config: { maxConcurrentSessions: MAX, staleThreshold: STALE_S } }) as unknown as Ctx;
  const refs: string[] = [];
  for (const [i, w] of fleet.entries()) {
    const id = `w${String(i).padStart(2, '0')}-${w.status}`;
    const ref = `${w.type}:${id}`;
    const beatMs = Date.now() - w.beatAgeS * 1000;
    const ws = `ws://127.0.0.1:${20000 + i}/secret${i}`;
    await touchWorker(ctx, ref, 600, ['id', id, 'browserType', w.type, 'wsEndpoint', ws, 'endpoint', ws, 'status', w.status, 'lastHeartbeat', w.seconds ? Math.floor(beatMs / 1000) : beatMs, 'startedAt', beatMs, 'version', '1.50.0']);
    await on.send(['HSET', ctx.keys.activeConnections(), ref, w.active]);
    refs.push(ref);
  }
  return { ctx, refs: refs.sort() };
}

const pick = (types: GridStatus['types']) =>
  Object.fromEntries(['chromium', 'firefox'].map((type) => {
    const { workers, available, draining, stale, active, free } = types[type]!;
    return [type, { workers, available, draining, stale, active, free }];
  }));
const expected = { chromium: expectedTotals('chromium'), firefox: expectedTotals('firefox') };

// the embedded backend (a grid started without --redis) runs the same scripts
const embedded = await createBackend({});
t.teardown(() => embedded.close());
for (const [name, on] of [['redis-server', backend], ['embedded', embedded]] as const) t.test(`gridStatus on ${name}: the totals counted inside Redis are the fleet's, whatever page of workers is asked`, async (t) => {
  const { ctx, refs } = await writeFleet('{pages-fn}:', on);
  const opts = { nowMs: Date.now(), staleMs: STALE_S * 1000, maxConcurrent: MAX };
  const all = await gridStatus(ctx, opts);
  t.same(pick(all.types), expected, 'totals per browser type');
  t.same(all.workers.map((w) => w.ref), refs, 'every worker listed, in ref order');
  t.equal(all.nextAfter, null, 'nothing follows the whole list');
  t.same(all.workers.map((w) => [w.active, w.stale]), refs.map((ref) => {
    const w = fleet[Number(/:w(\d+)/.exec(ref)![1])]!;
    return [w.active, w.beatAgeS > STALE_S];
  }), 'each worker its own sessions and staleness');
  t.ok(all.workers.every((w) => w.startedMs !== null && !w.endpoint.includes('secret')), 'start times read, endpoints without their secret path');

  const none = await gridStatus(ctx, { ...opts, limit: 0 });
  t.same([none.workers, none.nextAfter, pick(none.types)], [[], null, expected], 'limit 0: the totals alone');
  const page = await gridStatus(ctx, { ...opts, after: refs[4], limit: 3 });
  t.same(page.workers.map((w) => w.ref), refs.slice(5, 8), 'after the fifth ref, three workers');
  t.equal(page.nextAfter, refs[7], 'the next page starts after the last listed');
  t.same(pick(page.types), expected, 'the totals are the whole grid\'s on every page');
  const last = await gridStatus(ctx, { ...opts, after: refs.at(-3), limit: 10 });
  t.same([last.workers.length, last.nextAfter], [2, null], 'the last page says nothing follows');
  t.same((await gridStatus(ctx, { ...opts, after: 'zzz' })).workers, [], 'after every ref: no worker');
});

t.test('through a proxy: /status pages with next links, bad limits are one clear 400, /v1/capacity and `coord grid status` agree', async (t) => {
  const prefix = '{pages-http}:';
  const { refs } = await writeFleet(prefix);
  const port = await freePort();
  const sets = [`maxConcurrentSessions=${MAX}`, `staleThreshold=${STALE_S}`, 'reaperInProxy=false', 'cdp=false', `port=${port}`].flatMap((s) => ['--set', `browser-grid.${s}`]);
  const proxy = coord(['run', '--plugin', 'browser-grid', '--role', 'proxy', '--redis', redis.url, '--prefix', prefix, ...sets]);
  t.teardown(async () => {
    proxy.kill();
    await proxy.exited;
  });
  await proxy.waitFor((l) => l.msg === 'ready');
  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string) => {
    const res = await fetch(base + path);
    return { status: res.status, body: (await res.json()) as any };
  };

  const whole = await get('/status');
  t.equal(whole.status, 200);
  t.same([whole.body.workers.length, whole.body.next], [fleet.length, null], 'under the default page (1,000): every worker, no next link');
  t.same(pick(whole.body.types), expected, 'the totals');

  const seen: string[] = [];
  let path: string | null = '/status?limit=7';
  let pages = 0;
  while (path) {
    const { status, body } = await get(path);
    t.equal(status, 200, path);
    t.ok(body.workers.length <= 7, `${path}: at most 7 workers`);
    t.same(pick(body.types), expected, `${path}: the whole grid's totals`);
    seen.push(...body.workers.map((w: { ref: string }) => w.ref));
    path = body.next;
    pages++;
  }
  t.same([seen, pages], [refs, Math.ceil(fleet.length / 7)], 'the next links walk every worker once, in order');
  const totalsOnly = await get('/status?limit=0');
  t.same([totalsOnly.body.workers, totalsOnly.body.next, pick(totalsOnly.body.types)], [[], null, expected], '?limit=0: the totals alone');

  for (const bad of ['x', '-1', '2.5', '']) {
    const { status, body } = await get(`/status?limit=${bad}`);
    t.same({ status, body }, { status: 400, body: { error: { code: 400, message: `limit=${bad}: expected a whole number of workers, 0 or more (0: the totals alone)` } } }, `limit=${bad}: 400 naming it`);
  }

  const capacity = (await get('/v1/capacity')).body;
  for (const type of ['chromium', 'firefox'] as const) {
    const b = capacity.browsers.find((x: { browser: string }) => x.browser === type);
    const e = expected[type];
    t.same(b, { browser: type, workers: e.available, max_slots: e.available * MAX, active_sessions: e.active, available_slots: e.free, queued: 0 }, `/v1/capacity ${type}`);
  }
  const workers = (await get('/v1/workers')).body as { id: string; created_at: string | null; status: string }[];
  t.equal(workers.length, fleet.length, '/v1/workers lists every worker');
  t.ok(workers.every((w) => typeof w.created_at === 'string'), '/v1/workers: created_at from each worker\'s startedAt');

  const cli = coordSync(['grid', 'status', '--json', '--redis', redis.url, '--prefix', prefix, '--set', `browser-grid.staleThreshold=${STALE_S}`, '--set', `browser-grid.maxConcurrentSessions=${MAX}`]);
  t.equal(cli.status, 0, cli.stderr);
  const printed = JSON.parse(cli.stdout) as GridStatus;
  t.same([printed.workers.length, printed.nextAfter, pick(printed.types)], [fleet.length, null, expected], '`coord grid status --json`: every worker and the same totals');
});
