// The grid as operators see it: every worker with its state and counters,
// and totals per browser type. Served as /status, summed into /metrics, and
// printed by `coord grid status`.
import type { Ctx } from './context.ts';
import { readWorkers } from './scripts.ts';
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
  workers: WorkerStatus[];
  types: Record<string, TypeTotals>;
}

export async function gridStatus(
  ctx: Pick<Ctx, 'backend' | 'keys' | 'scripts'>,
  opts: { nowMs: number; staleMs: number; maxConcurrent: number },
): Promise<GridStatus> {
  const { backend, keys } = ctx;
  const indexed = await backend.pipeline(browserTypes.flatMap((t) => [['ZRANGE', keys.workerIndex({ browserType: t }), 0, -1], ['HGETALL', keys.versions({ browserType: t })]]));
  const refs = browserTypes.flatMap((_t, i) => (indexed[i * 2] as string[]) ?? []);
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
  // a page of workers per script call: three commands per worker made /status take ~0.5 s at 10,000 workers
  const read = await readWorkers(ctx, refs);
  const workers: WorkerStatus[] = refs.map((ref, i) => {
    const [status, beat, wsEndpoint, endpoint, version, bidiEndpoint, active, lifetime] = read[i]!;
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
    };
  });
  const types: Record<string, TypeTotals> = {};
  browserTypes.forEach((t, i) => {
    const mine = workers.filter((w) => w.browserType === t);
    const live = mine.filter((w) => !w.stale);
    types[t] = {
      workers: mine.length,
      available: live.filter((w) => w.status === 'available').length,
      draining: live.filter((w) => w.status !== 'available').length,
      stale: mine.length - live.length,
      active: mine.reduce((n, w) => n + w.active, 0),
      free: live.filter((w) => w.status === 'available').reduce((n, w) => n + Math.max(0, opts.maxConcurrent - w.active), 0),
      queued: queued[i]!,
      versions: versions[i]!,
    };
  });
  return { workers, types };
}
