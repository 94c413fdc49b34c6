// Orchestrators as the API shows them: type, platform, browsers, liveness,
// slots (free, reclaimed, held by which session) and queues.
import type { Ctx } from '../context.ts';

export interface OrchestratorView {
  id: string;
  type?: string;
  alive: boolean;
  platformName?: string;
  browsers: string[];
  slots: { total: number; available: string[]; reclaimed: string[]; held: Record<string, string> };
  backlog: string[];
  pending: string[];
}

export async function readOrchestrators(ctx: Pick<Ctx, 'backend' | 'keys'>): Promise<OrchestratorView[]> {
  const { backend, keys } = ctx;
  const ids = ((await backend.send(['SMEMBERS', keys.orchestrators()])) as string[]).sort();
  const per = 10;
  const replies = ids.length
    ? ((await backend.pipeline(
        ids.flatMap((orchestratorId) => {
          const o = { orchestratorId };
          return [
            ['HGET', keys.orchestrator(o), 'type'],
            ['EXISTS', keys.orchestratorHeartbeat(o)],
            ['GET', keys.orchestratorPlatformName(o)],
            ['SMEMBERS', keys.orchestratorBrowsers(o)],
            ['SMEMBERS', keys.slots(o)],
            ['LRANGE', keys.slotsAvailable(o), 0, -1],
            ['LRANGE', keys.slotsReclaimed(o), 0, -1],
            ['HGETALL', keys.slotsHeld(o)],
            ['LRANGE', keys.backlog(o), 0, -1],
            ['LRANGE', keys.pending(o), 0, -1],
          ] as [string, ...(string | number)[]][];
        }),
      )) as unknown[])
    : [];
  return ids.map((id, i) => {
    const r = replies.slice(i * per, i * per + per) as [string | null, number, string | null, string[], string[], string[], string[], string[], string[], string[]];
    const held = Object.fromEntries(r[7].flatMap((v, j) => (j % 2 ? [] : [[v, r[7][j + 1]!]])));
    return {
      id,
      type: r[0] ?? undefined,
      alive: r[1] === 1,
      platformName: r[2] ?? undefined,
      browsers: r[3].sort(),
      slots: { total: r[4].length, available: r[5], reclaimed: r[6], held },
      backlog: r[8],
      pending: r[9],
    };
  });
}

/** Every metrics key of WebGrid, as numbers. */
export async function readMetrics(ctx: Pick<Ctx, 'backend' | 'keys'>): Promise<Record<string, unknown>> {
  const { backend, keys } = ctx;
  const methods = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS', 'OTHER'];
  const levels = ['info', 'warn', 'fail'];
  const commands = [
    ...methods.map((method) => ['HGETALL', keys.httpRequests({ method })]),
    ['HGETALL', keys.httpBytes()],
    ['HGETALL', keys.sessionsTotal()],
    ['HGETALL', keys.sessionsDuration()],
    ['GET', keys.startupCount()],
    ['GET', keys.startupSum()],
    ['HGETALL', keys.startupBuckets()],
    ...levels.map((level) => ['HGETALL', keys.logCounts({ level })]),
    ['HGETALL', keys.slotsReclaimedTotal()],
  ] as [string, string][];
  const r = (await backend.pipeline(commands)) as unknown[];
  const numbers = (flat: unknown) => {
    const list = (flat as string[] | null) ?? [];
    return Object.fromEntries(list.flatMap((v, j) => (j % 2 ? [] : [[v, Number(list[j + 1])]]))) as Record<string, number>;
  };
  let i = 0;
  const requestsTotal = Object.fromEntries(methods.map((m) => [m, numbers(r[i++])]).filter(([, v]) => Object.keys(v as object).length));
  const bytes = numbers(r[i++]);
  const sessions = { total: numbers(r[i++]), durationSecondsTotal: numbers(r[i++]) };
  const startup = { count: Number(r[i++] ?? 0), sum: Number(r[i++] ?? 0), buckets: numbers(r[i++]) };
  const log = Object.fromEntries(levels.map((l) => [l, numbers(r[i++])]));
  const slotsReclaimed = numbers(r[i++]);
  return { http: { requestsTotal, netBytesTotal: bytes }, sessions: { ...sessions, startupHistogram: startup, log }, slots: { reclaimedTotal: slotsReclaimed } };
}
