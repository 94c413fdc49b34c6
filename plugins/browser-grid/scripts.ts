// The one module that runs browser-grid's Lua scripts (lua/*.lua): a typed
// function per operation, which fills in the keys and the arguments taken from
// the config, so the roles say what they do (select a worker, release a
// connection) and never build a script call themselves. scripts.gen.ts,
// generated from the Lua headers, types each call.
import type { Ctx } from './context.ts';
import { parseRef, type BrowserType } from './refs.ts';

/** The keys of a worker's record, counters and indexes (touchWorker, removeWorker). */
function workerSlots(ref: string) {
  const { browserType, workerId } = parseRef(ref);
  return { worker: { browserType, workerId }, active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType }, versions: { browserType } };
}

/** The limits every script that files a worker as free or not checks against. */
function limits(ctx: Ctx) {
  const { config } = ctx;
  return { staleMs: config.staleThreshold * 1000, maxConcurrent: config.maxConcurrentSessions, maxLifetime: config.maxLifetimeSessions };
}

/**
 * Registers or refreshes a worker (`fields`: field, value… to write; none when adopting) and files it in the indexes.
 * `ttl`: seconds, 0 leaves it. `exists`: the hash is there; `free`: it can take a session.
 */
export async function touchWorker(ctx: Ctx, ref: string, ttl: number, fields: (string | number)[]): Promise<{ exists: boolean; free: boolean }> {
  const [exists, free] = (await ctx.scripts.run('touchWorker', {
    keys: workerSlots(ref),
    args: { ref, nowMs: ctx.clock.now(), ...limits(ctx), ttl, fields },
  })) as [number, number];
  return { exists: exists === 1, free: free === 1 };
}

/** A worker leaves: its hash, counter fields and index entries go together. */
export async function removeWorker(ctx: Ctx, ref: string): Promise<void> {
  await ctx.scripts.run('removeWorker', { keys: workerSlots(ref), args: { ref } });
}

/** selectWorker's keys, built (admission keeps them: building costs as much as a part of the script). */
export type SelectKeys = Record<'active' | 'lifetime' | 'workerIndex' | 'freeIndex' | 'queue' | 'leases' | 'versions', string>;

/** The keys selectWorker takes for clients of a browser type and queue ('1.62', 'any', 'cdp', 'bidi') at a proxy. */
export function selectKeys(ctx: Ctx, browserType: BrowserType, queue: string, proxyId: string): SelectKeys {
  const k = ctx.keys;
  const type = { browserType };
  return {
    active: k.activeConnections(),
    lifetime: k.lifetimeConnections(),
    workerIndex: k.workerIndex(type),
    freeIndex: k.freeIndex(type),
    queue: k.queue({ ...type, version: queue }),
    leases: k.leases({ proxyId }),
    versions: k.versions(type),
  };
}

/** selectWorker's reply: ['ok', ref, endpoint, lifetime, …], ['noversion', 'v1,v2'], or ['absent'|'queued'|'wait']. */
export type Selected = [string, string?, string?, number?, number?];

export interface Selection {
  connectionId: string;
  /** The client's queue ticket, '' before it queued. */
  ticket: string;
  /** Workers not to select (they failed this client). */
  exclude: readonly string[];
  /** The client's Playwright major.minor, or ''. */
  version: string;
  protocol: 'playwright' | 'cdp' | 'bidi';
}

/** Picks a worker for a new session, counting and leasing it, or says why not. */
export function selectWorker(ctx: Ctx, keys: SelectKeys, s: Selection): Promise<Selected> {
  return ctx.scripts.run('selectWorker', {
    keys,
    args: {
      nowMs: ctx.clock.now(),
      ...limits(ctx),
      connectionId: s.connectionId,
      ticket: s.ticket,
      exclude: s.exclude.join(','),
      version: s.version,
      protocol: s.protocol,
    },
  }) as Promise<Selected>;
}

/** Queues a client's ticket; its position (1 = next), or 0 when the queue is full. */
export async function enqueue(ctx: Ctx, queue: { browserType: BrowserType; version: string }, ticket: string, nowMs: number): Promise<number> {
  return (await ctx.scripts.run('enqueue', { keys: { queue }, args: { ticket, nowMs, maxQueue: ctx.config.queueSize } })) as number;
}

/**
 * A relayed session closed: gives back its lease once (`rollback`: it never started, its lifetime count goes back too).
 * `free`: the worker can take a session again.
 */
export async function releaseConnection(ctx: Ctx, proxyId: string, ref: string, connectionId: string, rollback: boolean): Promise<{ released: boolean; free: boolean }> {
  const { browserType } = parseRef(ref);
  const [released, free] = (await ctx.scripts.run('releaseConnection', {
    keys: { active: {}, lifetime: {}, freeIndex: { browserType }, leases: { proxyId }, versions: { browserType } },
    args: { connectionId, nowMs: ctx.clock.now(), ...limits(ctx), rollback: rollback ? '1' : '0' },
  })) as [number, number];
  return { released: released === 1, free: free === 1 };
}

/** Files again the sessions a proxy relays ([connectionId, ref] each) whose lease Redis lost; the connection ids restored. */
export async function restoreLeases(ctx: Ctx, proxyId: string, sessions: readonly (readonly [string, string])[]): Promise<string[]> {
  return (await ctx.scripts.run('restoreLeases', { keys: { active: {}, leases: { proxyId } }, args: { sessions: sessions.flat() } })) as string[];
}

/** Removes up to `limit` workers of a type whose heartbeat is older than the stale threshold; the refs reaped. */
export async function reapWorkers(ctx: Ctx, browserType: BrowserType, limit: number): Promise<string[]> {
  return (await ctx.scripts.run('reapWorkers', {
    keys: { active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType } },
    args: { nowMs: ctx.clock.now(), staleMs: ctx.config.staleThreshold * 1000, limit },
  })) as string[];
}

/** Refs per readWorkers call: 200 take 1 to 3 ms in Redis (on a loaded 2-core VM; bench/scale.mjs), 500 took up to 7. */
const READ_PAGE = 200;

/** The values readWorkers gives of each worker. */
const READ_FIELDS = 9;

/**
 * What /status shows of each of `refs`, in order: [status, lastHeartbeat, wsEndpoint, endpoint, version,
 * bidiEndpoint, startedAt, active, lifetime] (null where missing). One short call per READ_PAGE refs, sent together.
 */
export async function readWorkers(ctx: Pick<Ctx, 'scripts'>, refs: readonly string[]): Promise<(string | null)[][]> {
  const pages: Promise<unknown>[] = [];
  for (let i = 0; i < refs.length; i += READ_PAGE) {
    pages.push(ctx.scripts.run('readWorkers', { keys: { active: {}, lifetime: {} }, args: { refs: refs.slice(i, i + READ_PAGE) } }));
  }
  // plain loops: flatMap over the pages cost ~25 ms at 10,000 workers
  const out: (string | null)[][] = [];
  for (const page of (await Promise.all(pages)) as (string | null)[][]) {
    for (let j = 0; j < page.length; j += READ_FIELDS) out.push(page.slice(j, j + READ_FIELDS));
  }
  return out;
}

/** Refs per tallyWorkers call: 250 take about 1 ms in Redis (500 took 2 to 3 ms at 10,000 workers; bench/scale.mjs). */
const TALLY_PAGE = 250;

/** The totals of workers of one type, counted inside Redis (tallyWorkers.lua), one short call per TALLY_PAGE refs. */
export async function tallyWorkers(
  ctx: Pick<Ctx, 'scripts'>,
  refs: readonly string[],
  opts: { nowMs: number; staleMs: number; maxConcurrent: number },
): Promise<{ workers: number; available: number; draining: number; stale: number; active: number; free: number }> {
  const pages: Promise<unknown>[] = [];
  for (let i = 0; i < refs.length; i += TALLY_PAGE) {
    const args = { nowMs: opts.nowMs, staleMs: opts.staleMs, maxConcurrent: opts.maxConcurrent, refs: refs.slice(i, i + TALLY_PAGE) };
    pages.push(ctx.scripts.run('tallyWorkers', { keys: { active: {} }, args }));
  }
  const sum = [0, 0, 0, 0, 0, 0];
  for (const page of (await Promise.all(pages)) as number[][]) page.forEach((n, j) => (sum[j]! += Number(n)));
  const [workers, available, draining, stale, active, free] = sum as [number, number, number, number, number, number];
  return { workers, available, draining, stale, active, free };
}

/** Gives back the leases of a proxy silent for `silentMs`: how many, or -1 when it is alive after all. */
export async function reapProxy(ctx: Ctx, proxyId: string, silentMs: number): Promise<number> {
  return (await ctx.scripts.run('reapProxy', {
    keys: { active: {}, proxyIndex: {}, leases: { proxyId } },
    args: { proxyId, nowMs: ctx.clock.now(), staleMs: silentMs },
  })) as number;
}

/** A pending session's client attaches here: its lease moves from `fromProxy` (which created it) to `toProxy`. */
export async function attachSession(ctx: Ctx, sessionId: string, fromProxy: string, toProxy: string): Promise<{ ref: string } | { refused: string }> {
  const [outcome, ref] = (await ctx.scripts.run('attachSession', {
    keys: { session: { sessionId }, fromLeases: { proxyId: fromProxy }, toLeases: { proxyId: toProxy } },
    args: { sessionId, fromProxy, toProxy, nowMs: ctx.clock.now() },
  })) as [string, string?];
  return outcome === 'ok' ? { ref: ref! } : { refused: outcome };
}

/** Ends a session from one of `from` to `to`, once; the status it ended from, or undefined when it had ended already (or is unknown). */
export async function endSession(ctx: Ctx, sessionId: string, from: readonly string[], to: 'completed' | 'failed' | 'expired', reason: string): Promise<string | undefined> {
  const [outcome, status] = (await ctx.scripts.run('endSession', {
    keys: { session: { sessionId } },
    args: { from: from.join(','), to, nowMs: ctx.clock.now(), reason, retentionS: Math.ceil(ctx.config.sessionRetention) },
  })) as [string, string?];
  return outcome === 'ended' ? status : undefined;
}
