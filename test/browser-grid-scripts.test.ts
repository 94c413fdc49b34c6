// The browser grid's Lua scripts on real Redis: selection (playwright-distributed's
// algorithm), leases, the admission queue, the reaper, and mixed fleets.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import type { Clock } from '../core/clock.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/browser-grid/index.ts';
import type { BrowserGridConfig } from '../plugins/browser-grid/config.ts';
import { startRedis } from './support/redis.ts';
import type { Ctx } from '../plugins/browser-grid/context.ts';

// GRID_BACKEND=embedded runs the same cases on the embedded backend
const redis = await startRedis();
const backend: Backend = await createBackend({ url: process.env.GRID_BACKEND === 'embedded' ? undefined : redis.url });
t.teardown(async () => {
  await backend.close();
  await redis.stop();
});

let now = 1_800_000_000_000;
const clock: Clock = { now: () => now, sleep: async () => {} };
let run = 0;

function grid(config: Partial<BrowserGridConfig> = {}): Ctx {
  return scenarioContext({
    plugin,
    backend,
    keyPrefix: `{t${++run}}:`,
    signal: new AbortController().signal,
    clock,
    config: { maxConcurrentSessions: 2, maxLifetimeSessions: 10, ...config },
  }) as Ctx;
}

/** Registers a worker with `fields` over a Playwright server's; a field given as null is left out. */
async function register(ctx: Ctx, workerId: string, fields: Record<string, string | number | null> = {}, ttl = 60) {
  const base = { id: workerId, browserType: 'chromium', wsEndpoint: `ws://127.0.0.1:1/${workerId}`, status: 'available', lastHeartbeat: Math.floor(now / 1000), version: '1.65.1' };
  return ctx.scripts.run('touchWorker', {
    keys: { worker: { browserType: 'chromium', workerId }, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
    args: {
      ref: `chromium:${workerId}`, nowMs: now, staleMs: ctx.config.staleThreshold * 1000,
      maxConcurrent: ctx.config.maxConcurrentSessions, maxLifetime: ctx.config.maxLifetimeSessions, ttl,
      fields: Object.entries({ ...base, ...fields }).filter(([, value]) => value !== null).flat().map(String),
    },
  });
}

async function select(ctx: Ctx, connectionId: string, opts: { ticket?: string; exclude?: string[]; proxyId?: string; version?: string; protocol?: string } = {}) {
  const version = opts.version ?? '1.65';
  return (await ctx.scripts.run('selectWorker', {
    keys: {
      active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' },
      queue: { browserType: 'chromium', version: version || 'any' }, leases: { proxyId: opts.proxyId ?? 'p1' }, versions: { browserType: 'chromium' },
    },
    args: {
      nowMs: now, staleMs: ctx.config.staleThreshold * 1000, maxConcurrent: ctx.config.maxConcurrentSessions,
      maxLifetime: ctx.config.maxLifetimeSessions, connectionId, ticket: opts.ticket ?? '', exclude: (opts.exclude ?? []).join(','), version, protocol: opts.protocol ?? 'playwright',
    },
  })) as string[];
}

async function release(ctx: Ctx, connectionId: string, rollback = false, proxyId = 'p1') {
  return ctx.scripts.run('releaseConnection', {
    keys: { active: {}, lifetime: {}, freeIndex: { browserType: 'chromium' }, leases: { proxyId }, versions: { browserType: 'chromium' } },
    args: { connectionId, nowMs: now, staleMs: ctx.config.staleThreshold * 1000, maxConcurrent: ctx.config.maxConcurrentSessions, maxLifetime: ctx.config.maxLifetimeSessions, rollback: rollback ? '1' : '0' },
  });
}

const counters = async (ctx: Ctx, which: 'activeConnections' | 'lifetimeConnections') => {
  const flat = (await backend.send(['HGETALL', ctx.keys[which]()])) as string[];
  const out: Record<string, number> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]!] = Number(flat[i + 1]);
  return out;
};
const setCounter = (ctx: Ctx, which: 'activeConnections' | 'lifetimeConnections', ref: string, n: number) => backend.send(['HSET', ctx.keys[which](), ref, n]);

t.test("registration writes playwright-distributed's fields, zero counters, a TTL and the indexes", async (t) => {
  const ctx = grid();
  t.same(await register(ctx, 'a'), [1, 1]);
  const key = ctx.keys.worker({ browserType: 'chromium', workerId: 'a' });
  const hash = (await backend.send(['HGETALL', key])) as string[];
  t.match(Object.fromEntries(hash.reduce<string[][]>((acc, v, i) => (i % 2 ? acc[acc.length - 1]!.push(v) : acc.push([v]), acc), [])), { browserType: 'chromium', status: 'available', wsEndpoint: 'ws://127.0.0.1:1/a' });
  t.ok((await backend.send(['TTL', key])) as number > 50);
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:a': 0 });
  t.same(await counters(ctx, 'lifetimeConnections'), { 'chromium:a': 0 });
});

t.test('selection prefers the highest lifetime below max - margin, ties to fewer active', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5, maxLifetimeSessions: 10 });
  for (const id of ['a', 'b', 'c']) await register(ctx, id);
  // 3 workers: margin = floor(10 / 3) = 3, so lifetimes below 7 are preferred
  await setCounter(ctx, 'lifetimeConnections', 'chromium:a', 8);
  await setCounter(ctx, 'lifetimeConnections', 'chromium:b', 4);
  await setCounter(ctx, 'lifetimeConnections', 'chromium:c', 4);
  await setCounter(ctx, 'activeConnections', 'chromium:b', 2);
  await setCounter(ctx, 'activeConnections', 'chromium:c', 1);
  for (const id of ['a', 'b', 'c']) await register(ctx, id); // refile with the new counters
  const first = await select(ctx, 'c1');
  t.same(first.slice(0, 2), ['ok', 'chromium:c'], 'b and c tie on lifetime 4; c has fewer active');
  t.equal(Number(first[3]), 5, 'lifetime counted');
  t.same((await select(ctx, 'c2')).slice(0, 2), ['ok', 'chromium:c'], 'c now has the highest lifetime (5) below 7');
});

t.test('falls back to any eligible worker when all are near their limit', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5, maxLifetimeSessions: 10 });
  await register(ctx, 'a');
  await register(ctx, 'b');
  await setCounter(ctx, 'lifetimeConnections', 'chromium:a', 9);
  await setCounter(ctx, 'lifetimeConnections', 'chromium:b', 10);
  await register(ctx, 'a');
  await register(ctx, 'b');
  const r = await select(ctx, 'c1');
  t.same(r.slice(0, 2), ['ok', 'chromium:a']);
  t.equal(Number(r[3]), 10, 'the connect that reaches the limit reports it (the proxy then sends shutdown)');
  t.same(await select(ctx, 'c2'), ['none'], 'both at the lifetime limit');
});

t.test('never selects stale, draining, full or foreign shutting-down workers', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 1 });
  await register(ctx, 'stale', { lastHeartbeat: Math.floor(now / 1000) - 120 });
  await register(ctx, 'draining', { status: 'draining' });
  await register(ctx, 'foreign', { status: 'shutting-down', lastHeartbeat: now });
  await register(ctx, 'ok');
  t.same((await select(ctx, 'c1')).slice(0, 2), ['ok', 'chromium:ok']);
  t.same(await select(ctx, 'c2'), ['none'], 'the only good worker is full');
});

t.test('a playwright-distributed worker (endpoint, ms heartbeat) is adopted and served', async (t) => {
  const ctx = grid();
  const key = ctx.keys.worker({ browserType: 'chromium', workerId: 'pd' });
  await backend.send(['HSET', key, 'id', 'pd', 'browserType', 'chromium', 'endpoint', 'ws://10.0.0.9:3131/pw', 'status', 'available', 'lastHeartbeat', now, 'startedAt', now]);
  await backend.send(['EXPIRE', key, 60]);
  t.same(await select(ctx, 'c0'), ['absent'], 'not indexed yet: no worker of the type is known');
  t.same(await ctx.scripts.run('touchWorker', {
    keys: { worker: key, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
    args: { ref: 'chromium:pd', nowMs: now, staleMs: 30_000, maxConcurrent: 2, maxLifetime: 10, ttl: 0, fields: [] },
  }), [1, 1]);
  t.same(await select(ctx, 'c1', { version: '1.62' }), ['noversion', ''], 'its version unknown: no versioned client is sent to it');
  t.same((await select(ctx, 'c1', { version: '' })).slice(0, 2), ['ok', 'chromium:pd'], 'a client naming no version may use it');
  t.same(await ctx.scripts.run('touchWorker', {
    keys: { worker: key, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
    args: { ref: 'chromium:pd', nowMs: now, staleMs: 30_000, maxConcurrent: 2, maxLifetime: 10, ttl: 0, fields: ['version', '1.62'] },
  }), [1, 1], 'its version learned from its server');
  const r = await select(ctx, 'c2', { version: '1.62' });
  t.same(r.slice(0, 3), ['ok', 'chromium:pd', 'ws://10.0.0.9:3131/pw']);
  t.equal(await backend.send(['HGET', key, 'version']), '1.62', 'written as the hash\'s version field');
});

t.test('removeWorker: the last worker of a type takes the type\'s versions index with it; one of two leaves it', async (t) => {
  const ctx = grid();
  await register(ctx, 'a');
  await register(ctx, 'b');
  const versions = ctx.keys.versions({ browserType: 'chromium' });
  const remove = (workerId: string) => ctx.scripts.run('removeWorker', {
    keys: { worker: { browserType: 'chromium', workerId }, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
    args: { ref: `chromium:${workerId}` },
  });
  await remove('a');
  t.equal(await ctx.backend.send(['EXISTS', versions]), 1, 'b still serves its version');
  await remove('b');
  t.equal(await ctx.backend.send(['EXISTS', versions]), 0, 'gone with the last worker');
});

t.test('release gives a lease back once, never below zero, never recreating a reaped worker', async (t) => {
  const ctx = grid();
  await register(ctx, 'a');
  await select(ctx, 'c1');
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:a': 1 });
  t.same(await release(ctx, 'c1'), [1, 1]);
  t.same(await release(ctx, 'c1'), [0, 0], 'second release is a no-op');
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:a': 0 });
  await select(ctx, 'c2');
  await ctx.scripts.run('removeWorker', {
    keys: { worker: { browserType: 'chromium', workerId: 'a' }, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
    args: { ref: 'chromium:a' },
  });
  await release(ctx, 'c2');
  t.same(await counters(ctx, 'activeConnections'), {}, 'no orphan or negative field');
  await register(ctx, 'b');
  await select(ctx, 'c3');
  await setCounter(ctx, 'activeConnections', 'chromium:b', 0);
  await release(ctx, 'c3');
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:b': 0 }, 'clamped at zero');
  await select(ctx, 'c4');
  await release(ctx, 'c4', true);
  t.same(await counters(ctx, 'lifetimeConnections'), { 'chromium:b': 1 }, 'a failed dial rolls the lifetime count back');
});

t.test('a failed dial can exclude a worker for the retry', async (t) => {
  const ctx = grid();
  await register(ctx, 'a');
  await register(ctx, 'b');
  const first = await select(ctx, 'c1');
  const second = await select(ctx, 'c1', { exclude: [first[1]!] });
  t.equal(second[0], 'ok');
  t.not(second[1], first[1]);
  t.same(await select(ctx, 'c2', { exclude: ['chromium:a', 'chromium:b'] }), ['none']);
});

t.test('queue: first come first served, bounded, expired tickets dropped', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 1 });
  await register(ctx, 'a');
  t.equal((await select(ctx, 'c1'))[0], 'ok');
  const enqueue = (ticket: string, max = 2) => ctx.scripts.run('enqueue', { keys: { queue: { browserType: 'chromium', version: '1.65' } }, args: { ticket, nowMs: now, maxQueue: max } });
  const t1 = `${now + 10_000}:p1:t1`;
  const t2 = `${now + 10_000}:p2:t2`;
  t.equal(await enqueue(t1), 1);
  now += 1;
  t.equal(await enqueue(t2), 2);
  t.equal(await enqueue(`${now + 10_000}:p1:t3`), 0, 'full');
  await release(ctx, 'c1');
  t.same(await select(ctx, 'x'), ['queued'], 'a newcomer does not jump the queue');
  t.same(await select(ctx, 'c3', { ticket: t2 }), ['wait'], 'second in line waits');
  t.same((await select(ctx, 'c2', { ticket: t1 })).slice(0, 2), ['ok', 'chromium:a'], 'head is served');
  t.equal(await backend.send(['ZCARD', ctx.keys.queue({ browserType: 'chromium', version: '1.65' })]), 1);
  now += 20_000;
  await release(ctx, 'c2');
  t.same((await select(ctx, 'late')).slice(0, 2), ['ok', 'chromium:a'], 'the expired ticket no longer blocks');
});

t.test('reapProxy returns the capacity of a silent proxy, not of a live one', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5 });
  await register(ctx, 'a');
  await backend.send(['ZADD', ctx.keys.proxyIndex(), now, 'dead']);
  await backend.send(['ZADD', ctx.keys.proxyIndex(), now, 'live']);
  await select(ctx, 'c1', { proxyId: 'dead' });
  await select(ctx, 'c2', { proxyId: 'dead' });
  await select(ctx, 'c3', { proxyId: 'live' });
  const reap = (proxyId: string) => ctx.scripts.run('reapProxy', { keys: { active: {}, proxyIndex: {}, leases: { proxyId } }, args: { proxyId, nowMs: now, staleMs: 30_000 } });
  t.equal(await reap('dead'), -1, 'still heartbeating');
  now += 31_000;
  await backend.send(['ZADD', ctx.keys.proxyIndex(), now, 'live']);
  t.equal(await reap('dead'), 2);
  t.equal(await reap('live'), -1);
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:a': 1 });
  t.equal(await backend.send(['EXISTS', ctx.keys.leases({ proxyId: 'dead' })]), 0);
});

t.test('reapWorkers removes stale workers with their counters and rescores fresh foreign ones', async (t) => {
  const ctx = grid();
  await register(ctx, 'old');
  await register(ctx, 'foreign', { lastHeartbeat: now });
  now += 40_000;
  await backend.send(['HSET', ctx.keys.worker({ browserType: 'chromium', workerId: 'foreign' }), 'lastHeartbeat', now]);
  const reaped = await ctx.scripts.run('reapWorkers', {
    keys: { active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' } },
    args: { nowMs: now, staleMs: 30_000, limit: 100 },
  });
  t.same(reaped, ['chromium:old']);
  t.same(Object.keys(await counters(ctx, 'activeConnections')), ['chromium:foreign']);
  t.equal(await backend.send(['EXISTS', ctx.keys.worker({ browserType: 'chromium', workerId: 'old' })]), 0);
  t.equal(Number(await backend.send(['ZSCORE', ctx.keys.workerIndex({ browserType: 'chromium' }), 'chromium:foreign'])), now);
});

t.test('readWorkers reads a page of workers: their fields and counters, nothing for a worker gone', async (t) => {
  const ctx = grid();
  const started = Math.floor(now / 1000) - 60;
  await register(ctx, 'a', { startedAt: started });
  await register(ctx, 'b', { wsEndpoint: null, bidiEndpoint: 'ws://127.0.0.1:2/b', status: 'draining', version: null });
  await setCounter(ctx, 'activeConnections', 'chromium:a', 1);
  await setCounter(ctx, 'lifetimeConnections', 'chromium:a', 7);
  const page = await ctx.scripts.run('readWorkers', { keys: { active: {}, lifetime: {} }, args: { refs: ['chromium:a', 'chromium:b', 'chromium:gone'] } });
  const beat = String(Math.floor(now / 1000));
  t.same(page, [
    'available', beat, 'ws://127.0.0.1:1/a', null, '1.65.1', null, String(started), '1', '7',
    'draining', beat, null, null, null, 'ws://127.0.0.1:2/b', null, '0', '0',
    null, null, null, null, null, null, null, null, null,
  ]);
});

t.test('version-aware selection: each client to a worker of its major.minor; an unserved version is named at once', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5 });
  await register(ctx, 'old', { version: '1.62.1' });
  await register(ctx, 'new', { version: '1.65.1' });
  for (let i = 0; i < 4; i++) {
    t.same((await select(ctx, `o${i}`, { version: '1.62' })).slice(0, 2), ['ok', 'chromium:old']);
    t.same((await select(ctx, `n${i}`, { version: '1.65' })).slice(0, 2), ['ok', 'chromium:new']);
  }
  t.same(await select(ctx, 'x', { version: '1.50' }), ['noversion', '1.62,1.65'], 'the versions the grid serves');
  t.equal((await select(ctx, 'any', { version: '' }))[0], 'ok', 'a client naming no version gets any worker');
  await select(ctx, 'o4', { version: '1.62' });
  t.same(await select(ctx, 'o5', { version: '1.62' }), ['none'], 'the 1.62 worker is full: wait, although the 1.65 one has room');
  t.same(await release(ctx, 'o0'), [1, 1], 'a release files it back in its own band');
  t.same((await select(ctx, 'o6', { version: '1.62' })).slice(0, 2), ['ok', 'chromium:old']);
  now += 31_000;
  await register(ctx, 'new', { version: '1.65.1', lastHeartbeat: Math.floor(now / 1000) });
  t.same(await select(ctx, 'y', { version: '1.62' }), ['noversion', '1.65'], 'a version whose workers went silent is no longer served');
});

t.test('restoreLeases files again the sessions a proxy relays, once', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5 });
  const restore = (sessions: string[]) => ctx.scripts.run('restoreLeases', { keys: { active: {}, leases: { proxyId: 'p1' } }, args: { sessions } });
  await register(ctx, 'a');
  await select(ctx, 'c1');
  t.same(await restore(['c1', 'chromium:a', 'c2', 'chromium:a', 'c3', 'chromium:b']), ['c2', 'c3'], 'the lease that is there is untouched');
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:a': 2, 'chromium:b': 1 });
  t.same(await restore(['c1', 'chromium:a', 'c2', 'chromium:a']), [], 'a second call changes nothing');
  t.same(await release(ctx, 'c2'), [1, 1]);
  t.same(await counters(ctx, 'activeConnections'), { 'chromium:a': 1, 'chromium:b': 1 });
});

t.test('a CDP client is given only workers with a CDP port, whatever their version, and gets that port', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5 });
  await register(ctx, 'pd', { version: '1.62' }); // a playwright-distributed worker: no cdpEndpoint
  await register(ctx, 'coord', { cdpEndpoint: 'ws://127.0.0.1:2/' });
  await setCounter(ctx, 'lifetimeConnections', 'chromium:pd', 4);
  await register(ctx, 'pd', { version: '1.62' }); // refiled: now the selector's first choice
  const r = await select(ctx, 'c1', { version: '', protocol: 'cdp' });
  t.same(r.slice(0, 3), ['ok', 'chromium:coord', 'ws://127.0.0.1:2/']);
  t.same((await select(ctx, 'c2', { version: '1.62' })).slice(0, 2), ['ok', 'chromium:pd'], 'passed over, not dropped: Playwright clients still get it');
});

t.test('a BiDi client is given only workers with a BiDi port, and gets that port; no other client is given such a worker', async (t) => {
  const ctx = grid({ maxConcurrentSessions: 5 });
  // a Firefox BiDi worker: no Playwright server, so no wsEndpoint and no version
  await register(ctx, 'firefox', { wsEndpoint: null, version: null, bidiEndpoint: 'ws://127.0.0.1:3/' });
  t.same(await select(ctx, 'c1', { version: '' }), ['none'], 'a Playwright client naming no version: passed over');
  t.same(await select(ctx, 'c2', { version: '', protocol: 'cdp' }), ['none'], 'a CDP client: passed over');
  t.same((await select(ctx, 'c3', { version: '1.65' }))[0], 'noversion', 'a Playwright client naming its version: no worker speaks it');
  t.same((await select(ctx, 'c4', { version: '', protocol: 'bidi' })).slice(0, 3), ['ok', 'chromium:firefox', 'ws://127.0.0.1:3/'], 'the BiDi client gets the BiDi port');
  await register(ctx, 'server', { version: '1.65' });
  t.same((await select(ctx, 'c5', { version: '', protocol: 'bidi' })).slice(0, 2), ['ok', 'chromium:firefox'], 'not the Playwright server beside it');
  t.same((await select(ctx, 'c6', { version: '' })).slice(0, 3), ['ok', 'chromium:server', 'ws://127.0.0.1:1/server'], 'which Playwright clients get');
});
