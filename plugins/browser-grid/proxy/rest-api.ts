// The read side of the newest playwright-distributed's REST API (its
// PostgreSQL-era control plane, after v0.3.0), served by every proxy for
// dashboards and autoscalers: GET /v1/sessions, /v1/capacity, /v1/workers.
// Fields keep playwright-distributed's names (snake_case) where they mean
// the same; coord's additions are named in docs/browser-grid.md. Everything
// is read from Redis, so any proxy answers for the whole grid.
import type { Backend, KeyBuilders } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';
import type { BrowserGridKeys } from '../contract.ts';
import { browserTypes, parseRef } from '../refs.ts';
import { gridStatus, listWorkers, workerStatuses, type GridStatus, type WorkerStatus } from '../status.ts';
import { effectiveStatus, isSessionId, sessionView, toRecord } from './session-records.ts';

export interface RestContext {
  backend: Backend;
  keys: KeyBuilders<BrowserGridKeys>;
  scripts: Ctx['scripts'];
  nowMs: number;
  staleMs: number;
  maxConcurrent: number;
  maxQueueSize: number;
  proxyId: string;
  /** Clients waiting at this proxy. */
  waitingHere: number;
  /** When this proxy's own sessions started (connection id → ms); other proxies' sessions have no start time here. */
  startedHere: ReadonlyMap<string, number>;
  /** ws://HOST:PORT as the client reached this proxy. */
  base: string;
}

export const REST_PATHS = ['/v1/sessions', '/v1/capacity', '/v1/workers'] as const;
export type RestPath = (typeof REST_PATHS)[number];

export function isRestPath(path: string): path is RestPath {
  return (REST_PATHS as readonly string[]).includes(path);
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** playwright-distributed's worker statuses: available, draining, stalled (heartbeat too old), shutting_down. */
function workerState(w: WorkerStatus): string {
  if (w.stale) return 'stalled';
  return w.status === 'shutting-down' ? 'shutting_down' : w.status;
}

/** The body of GET `path` (one of REST_PATHS). */
export async function restResource(path: RestPath, ctx: RestContext): Promise<unknown> {
  const opts = { nowMs: ctx.nowMs, staleMs: ctx.staleMs, maxConcurrent: ctx.maxConcurrent };
  // /v1/capacity needs the totals alone, /v1/workers the workers alone, /v1/sessions only the workers its sessions are on
  if (path === '/v1/capacity') return capacity(await gridStatus(ctx, { ...opts, limit: 0 }), ctx);
  if (path === '/v1/workers') return workers(await listWorkers(ctx, opts), ctx);
  return sessions(ctx);
}

function capacity(status: GridStatus, ctx: RestContext) {
  const browsers = browserTypes.map((browser) => {
    const t = status.types[browser]!;
    return { browser, workers: t.available, max_slots: t.available * ctx.maxConcurrent, active_sessions: t.active, available_slots: t.free, queued: t.queued };
  });
  const sum = (field: 'workers' | 'max_slots' | 'active_sessions' | 'available_slots') => browsers.reduce((n, b) => n + b[field], 0);
  return {
    browsers,
    totals: { workers: sum('workers'), max_slots: sum('max_slots'), active_sessions: sum('active_sessions'), available_slots: sum('available_slots') },
    queued: browsers.reduce((n, b) => n + b.queued, 0),
    queued_here: ctx.waitingHere,
    max_queue_size: ctx.maxQueueSize,
  };
}

function workers(list: WorkerStatus[], ctx: RestContext) {
  return list.map((w) => ({
    id: w.workerId,
    address: w.endpoint,
    browser: w.browserType,
    playwright_version: w.version,
    max_slots: ctx.maxConcurrent,
    status: workerState(w),
    last_heartbeat: w.heartbeatAgeMs === null ? null : iso(ctx.nowMs - w.heartbeatAgeMs),
    lifetime_sessions: w.lifetime,
    created_at: iso(w.startedMs ?? undefined),
    active_sessions: w.active,
  }));
}

async function sessions(ctx: RestContext) {
  const proxies = (await ctx.backend.send(['ZRANGE', ctx.keys.proxyIndex(), 0, -1, 'WITHSCORES'])) as string[];
  const beats = new Map<string, number>();
  for (let i = 0; i < proxies.length; i += 2) beats.set(proxies[i]!, Number(proxies[i + 1]));
  const leases = await ctx.backend.pipeline([...beats.keys()].map((proxyId) => ['HGETALL', ctx.keys.leases({ proxyId })]));
  const held = [...beats.keys()].flatMap((proxyId, p) => {
    const flat = (leases[p] as string[] | null) ?? [];
    return Array.from({ length: flat.length / 2 }, (_, i) => ({ proxyId, id: flat[2 * i]!, ref: flat[2 * i + 1]! }));
  });
  // sessions created with POST /v1/sessions have a record of their own (session-records.ts)
  const created = held.filter(({ id }) => isSessionId(id));
  const replies = await ctx.backend.pipeline(created.map(({ id }) => ['HGETALL', ctx.keys.session({ sessionId: id })]));
  const records = new Map(created.map(({ id }, i) => [id, toRecord(replies[i])]));
  const refs = [...new Set(held.map(({ ref }) => ref))];
  const onWorkers = await workerStatuses(ctx, refs, { nowMs: ctx.nowMs, staleMs: ctx.staleMs });
  const byRef = new Map(onWorkers.map((w) => [w.ref, w]));
  return held.map(({ proxyId, id, ref }) => {
    const record = records.get(id);
    if (record) return sessionView(record, effectiveStatus(record, ctx.nowMs, true), `${ctx.base}/sessions/${id}`);
    const { browserType, workerId } = parseRef(ref);
    const worker = byRef.get(ref);
    const startedMs = proxyId === ctx.proxyId ? ctx.startedHere.get(id) : undefined;
    return {
      id,
      worker_id: workerId,
      browser: browserType,
      playwright_version: worker?.version ?? '',
      worker_address: worker?.endpoint ?? '',
      mode: 'default',
      status: 'running',
      created_at: iso(startedMs),
      started_at: iso(startedMs),
      last_heartbeat: iso(beats.get(proxyId)),
      connect_metadata: {},
      proxy_id: proxyId,
    };
  });
}
