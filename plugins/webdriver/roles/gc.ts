// gc: every gc.interval, purges terminated sessions older than the retention
// period, and the oldest past gc.maxSessions or gc.maxBytes, terminates active sessions that have neither a node nor a manager
// heartbeat (their slot goes back, counted dead), drops managers that died
// without deregistering, and forgets orchestrators whose retain key has expired.
import type { Role } from '../../../entries/plugin.ts';
import { MANAGER_HOST_TTL, type Ctx } from '../context.ts';
import { forgetOrchestrator, measureSession, purgeSession, terminateSession } from '../scripts.ts';

export interface GcResult {
  purged: string[];
  terminated: string[];
  forgotten: string[];
}

export async function gcOnce(ctx: Ctx): Promise<GcResult> {
  const { backend, keys, clock } = ctx;
  const result: GcResult = { purged: [], terminated: [], forgotten: [] };

  const active = (await backend.send(['SMEMBERS', keys.sessionsActive()])) as string[];
  if (active.length) {
    const beats = (await backend.pipeline(
      active.map((sessionId) => ['EXISTS', keys.sessionNodeHeartbeat({ sessionId }), keys.sessionManagerHeartbeat({ sessionId })] as [string, string, string]),
    )) as number[];
    for (const [i, sessionId] of active.entries()) {
      if (beats[i] !== 0) continue;
      const ended = await terminateSession(ctx, sessionId, { component: 'orchestrator', code: 'TERM', meta: 'gc: neither the node nor the manager has a heartbeat', reason: 'dead' });
      if (ended.terminated) result.terminated.push(sessionId);
    }
  }

  result.purged.push(...(await purgeHistory(ctx)));

  // managers that died without deregistering: silent for longer than their host key lives
  await backend.send(['ZREMRANGEBYSCORE', keys.managers(), '-inf', `(${clock.now() - MANAGER_HOST_TTL * 1000}`]);

  for (const orchestratorId of (await backend.send(['SMEMBERS', keys.orchestrators()])) as string[]) {
    if (await forgetOrchestrator(ctx, orchestratorId)) result.forgotten.push(orchestratorId);
  }
  return result;
}

/**
 * Purges terminated sessions past the retention period, then the oldest of the
 * rest past gc.maxSessions or gc.maxBytes (each weighed once, by measureSession,
 * the first pass after it ended). Returns the purged session IDs.
 */
async function purgeHistory(ctx: Ctx): Promise<string[]> {
  const { backend, keys, clock, config } = ctx;
  const terminated = (await backend.send(['SMEMBERS', keys.sessionsTerminated()])) as string[];
  if (!terminated.length) return [];
  const stamps = (await backend.pipeline(
    terminated.map((sessionId) => ['HMGET', keys.sessionStatus({ sessionId }), 'terminatedAt', 'bytes'] as [string, string, string, string]),
  )) as [string | null, string | null][];
  const before = clock.now() - config.gc.retention * 1000;
  const expired: string[] = [];
  const kept: { sessionId: string; at: number; bytes: number }[] = [];
  for (const [i, sessionId] of terminated.entries()) {
    const [terminatedAt, bytes] = stamps[i] ?? [null, null];
    const at = Date.parse(terminatedAt ?? '');
    if (!Number.isFinite(at) || at <= before) expired.push(sessionId);
    else kept.push({ sessionId, at, bytes: bytes === null ? Number.NaN : Number(bytes) });
  }
  for (const session of kept) if (Number.isNaN(session.bytes)) session.bytes = await measureSession(ctx, session.sessionId);
  kept.sort((a, b) => b.at - a.at); // newest first: the history keeps the newest
  const { maxSessions, maxBytes } = config.gc;
  let total = 0;
  const over = kept.filter((session, i) => {
    total += session.bytes;
    return (maxSessions > 0 && i >= maxSessions) || (maxBytes > 0 && total > maxBytes);
  });
  const purged = [...expired, ...over.map((s) => s.sessionId)];
  for (const sessionId of purged) await purgeSession(ctx, sessionId);
  return purged;
}

export function gcRole(ctx: Ctx): Role {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = gcOnce(ctx)
      .then((r) => {
        if (r.terminated.length) ctx.logger.warn('gc terminated sessions without heartbeats', { sessions: r.terminated });
        if (r.purged.length) ctx.logger.info('gc purged terminated sessions', { count: r.purged.length });
        if (r.forgotten.length) ctx.logger.info('gc forgot orchestrators', { orchestrators: r.forgotten });
      })
      .catch((error) => ctx.logger.warn('gc pass failed', { error: (error as Error).message }))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, ctx.config.gc.interval * 1000);
      });
  };
  return {
    async start() {
      timer = setTimeout(tick, ctx.config.gc.interval * 1000);
      ctx.logger.info('gc running', { everySeconds: ctx.config.gc.interval, retentionSeconds: ctx.config.gc.retention, maxSessions: ctx.config.gc.maxSessions, maxBytes: ctx.config.gc.maxBytes });
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
