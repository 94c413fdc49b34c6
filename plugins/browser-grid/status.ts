// The grid as operators see it: every worker with its state and counters,
// and totals per browser type. Served as /status, summed into /metrics, and
// printed by `coord grid status`.
import type { Ctx } from './context.ts';
import { readWorkers, tallyWorkers } from './scripts.ts';
import { withoutSecret } from './worker/endpoint-secret.ts';
import { browserTypes, heartbeatMs, parseRef } from './refs.ts';

export interface WorkerStatus {
  ref: string;
  browserType: string;
  workerId: string;
  status: string;
  /** Scheme, host and port; the secret path is left out. */
  endpoint: string;
  /** Playwright version of its browser server ('' while unknown). */
  version: string;
  active: number;
  lifetime: number;
  heartbeatAgeMs: number | null;
  stale: boolean;
  /** When it started (ms), null while unknown. */
  startedMs: number | null;
}

export interface TypeTotals {
  workers: number;
  available: number;
  draining: number;
  stale: number;
  active: number;
  /** Sessions that could start right now without queueing. */
  free: number;
  queued: number;
  /** Playwright major.minor versions live workers serve. */
  versions: string[];
}

/** The queues of clients that name no Playwright version, besides each version's queue. */
const UNVERSIONED_QUEUES = ['any', 'cdp', 'bidi'];

export interface GridStatus {
  /** The workers asked for (every one unless a page was asked), in ref order. */
  workers: WorkerStatus[];
  /** Totals over every worker, whatever page was asked. */
  types: Record<string, TypeTotals>;
  /** The last ref listed when more workers follow (the next page starts after it); null when none do. */
  nextAfter: string | null;
}

export interface StatusOptions {
  nowMs: number;
  staleMs: number;
  maxConcurrent: number;
  /** List only workers whose ref sorts after this one. */
  after?: string;
  /** List at most this many workers (0: totals only); every one when undefined. */
  limit?: number;
}

export async function gridStatus(ctx: Pick<Ctx, 'backend' | 'keys' | 'scripts'>, opts: StatusOptions): Promise<GridStatus> {
  const { backend, keys } = ctx;
  const indexed = await backend.pipeline(browserTypes.flatMap((t) => [['ZRANGE', keys.workerIndex({ browserType: t }), 0, -1], ['HGETALL', keys.versions({ browserType: t })]]));
  const refsByType = browserTypes.map((_t, i) => (indexed[i * 2] as string[]) ?? []);
  const versions = browserTypes.map((_t, i) => {
    const flat = (indexed[i * 2 + 1] as string[]) ?? [];
    return flat.filter((_v, j) => j % 2 === 0 && opts.nowMs - Number(flat[j + 1]) <= opts.staleMs).sort();
  });
  const queues = await backend.pipeline(
    // 'cdp', 'bidi': the DevTools-protocol and WebDriver BiDi clients' queues (admission/admission.ts)
    browserTypes.flatMap((t, i) => [...versions[i]!, ...UNVERSIONED_QUEUES].map((version) => ['ZCARD', keys.queue({ browserType: t, version })] as [string, ...string[]])),
  );
  const queued: number[] = [];
  let at = 0;
  browserTypes.forEach((_t, i) => {
    queued[i] = 0;
    for (let n = 0; n < versions[i]!.length + UNVERSIONED_QUEUES.length; n++) queued[i] += Number(queues[at++] ?? 0);
  });
  // totals are counted inside Redis and workers read only for the page asked: reading every worker's
  // fields made /status and /v1/capacity take ~200-300 ms at 10,000 workers (bench/scale.mjs)
  const [tallies, page] = await Promise.all([
    Promise.all(refsByType.map((refs) => tallyWorkers(ctx, refs, opts))),
    workerPage(ctx, refsByType.flat().sort(), opts),
  ]);
  const types: Record<string, TypeTotals> = {};
  browserTypes.forEach((t, i) => {
    types[t] = { ...tallies[i]!, queued: queued[i]!, versions: versions[i]! };
  });
  return { workers: page.workers, types, nextAfter: page.nextAfter };
}

/** Every worker, in ref order, without the totals (what /v1/workers lists). */
export async function listWorkers(ctx: Pick<Ctx, 'backend' | 'keys' | 'scripts'>, opts: { nowMs: number; staleMs: number }): Promise<WorkerStatus[]> {
  const indexed = await ctx.backend.pipeline(browserTypes.map((t) => ['ZRANGE', ctx.keys.workerIndex({ browserType: t }), 0, -1]));
  return workerStatuses(ctx, indexed.flatMap((refs) => (refs as string[]) ?? []).sort(), opts);
}

/** The page of `sorted` refs that `opts` asks for, read. */
async function workerPage(ctx: Pick<Ctx, 'scripts'>, sorted: string[], opts: StatusOptions) {
  let from = opts.after === undefined ? 0 : sorted.findIndex((ref) => ref > opts.after!);
  if (from < 0) from = sorted.length;
  const refs = sorted.slice(from, opts.limit === undefined ? undefined : from + opts.limit);
  const more = refs.length > 0 && from + refs.length < sorted.length;
  return { workers: await workerStatuses(ctx, refs, opts), nextAfter: more ? refs.at(-1)! : null };
}

/** What /status shows of each of `refs`, in order. */
export async function workerStatuses(ctx: Pick<Ctx, 'scripts'>, refs: readonly string[], opts: { nowMs: number; staleMs: number }): Promise<WorkerStatus[]> {
  const read = await readWorkers(ctx, refs);
  return refs.map((ref, i) => {
    const [status, beat, wsEndpoint, endpoint, version, bidiEndpoint, startedAt, active, lifetime] = read[i]!;
    const ms = heartbeatMs(beat);
    const age = ms === undefined ? null : opts.nowMs - ms;
    return {
      ref,
      ...parseRef(ref),
      status: status ?? 'gone',
      // the path is the worker's secret (worker/endpoint-secret.ts): it stays in Redis
      // a Firefox BiDi worker has no Playwright server: its BiDi port
      endpoint: withoutSecret(wsEndpoint ?? endpoint ?? bidiEndpoint ?? ''),
      version: version ?? '',
      active: Number(active ?? 0),
      lifetime: Number(lifetime ?? 0),
      heartbeatAgeMs: age,
      stale: age === null || age > opts.staleMs,
      startedMs: heartbeatMs(startedAt) ?? null,
    };
  });
}
