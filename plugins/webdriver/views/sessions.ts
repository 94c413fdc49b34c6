// Sessions as the API and `coord webdriver sessions` show them: state,
// timestamps, timings, capabilities and (on request) the log.
import type { Ctx } from '../context.ts';
import { readLog, type LogEntry } from '../session/log.ts';

export type SessionState = 'queued' | 'pending' | 'alive' | 'terminated';

export interface SessionView {
  id: string;
  state: SessionState;
  status: { queuedAt?: string; pendingAt?: string; aliveAt?: string; terminatedAt?: string };
  /** Seconds: waiting for a slot and scheduling (queued → pending), until served (queued → alive), and alive so far or in all. */
  timings: { queued?: number; startup?: number; alive?: number };
  slot?: string;
  orchestrator?: string;
  browser?: string;
  capabilities: { requested?: unknown; actual?: unknown };
  metadata: Record<string, string>;
  upstream: Record<string, string>;
  downstream: Record<string, string>;
  lastCode?: string;
  log?: LogEntry[];
}

type Reader = Pick<Ctx, 'backend' | 'keys' | 'clock'>;

/** Session IDs by set (active first), newest first within each. */
export async function sessionIds(ctx: Reader, which: 'active' | 'terminated' | 'all' = 'all'): Promise<string[]> {
  const active = which === 'terminated' ? [] : ((await ctx.backend.send(['SMEMBERS', ctx.keys.sessionsActive()])) as string[]);
  const terminated = which === 'active' ? [] : ((await ctx.backend.send(['SMEMBERS', ctx.keys.sessionsTerminated()])) as string[]);
  return [...active, ...terminated];
}

const toObject = (flat: string[]) => Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]!]]))) as Record<string, string>;
const parse = (text: string | undefined) => {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return text;
  }
};

/** The node's key stays in Redis: whoever reads the API must not be able to talk to the node with it. */
function withoutSecrets(upstream: Record<string, string>): Record<string, string> {
  const { key: _key, ...shown } = upstream;
  return shown;
}

export async function readSessions(ctx: Reader, ids: readonly string[], withLog = false): Promise<SessionView[]> {
  const { backend, keys } = ctx;
  const per = 8;
  const replies = ids.length
    ? await backend.pipeline(
        ids.flatMap((sessionId) => {
          const s = { sessionId };
          return [
            ['HGETALL', keys.sessionStatus(s)],
            ['GET', keys.sessionSlot(s)],
            ['LINDEX', keys.sessionOrchestrator(s), 0],
            ['HGETALL', keys.sessionCapabilities(s)],
            ['HGETALL', keys.sessionMetadata(s)],
            ['HGETALL', keys.sessionUpstream(s)],
            ['HGETALL', keys.sessionDownstream(s)],
            ['XREVRANGE', keys.sessionLog(s), '+', '-', 'COUNT', 1],
          ] as [string, ...(string | number)[]][];
        }),
      )
    : [];
  const now = ctx.clock.now();
  const views: SessionView[] = [];
  for (const [i, id] of ids.entries()) {
    const r = replies.slice(i * per, i * per + per).map((x) => (x instanceof Error ? null : x));
    const status = toObject((r[0] as string[] | null) ?? []);
    if (!status.queuedAt) continue; // purged meanwhile
    const caps = toObject((r[3] as string[] | null) ?? []);
    const last = (r[7] as [string, string[]][] | null)?.[0];
    const actual = parse(caps.actual) as { browserName?: string; browserVersion?: string } | undefined;
    const at = (k: keyof SessionView['status']) => (status[k] ? Date.parse(status[k]) : undefined);
    const q = at('queuedAt')!;
    const p = at('pendingAt');
    const a = at('aliveAt');
    const t = at('terminatedAt');
    const state: SessionState = t ? 'terminated' : a ? 'alive' : p ? 'pending' : 'queued';
    const secs = (ms: number) => Math.round(ms) / 1000;
    views.push({
      id,
      state,
      status,
      timings: {
        queued: secs((p ?? t ?? now) - q),
        startup: a ? secs(a - q) : undefined,
        alive: a ? secs((t ?? now) - a) : undefined,
      },
      slot: (r[1] as string | null) ?? undefined,
      orchestrator: (r[2] as string | null) ?? undefined,
      browser: actual?.browserName ? `${actual.browserName} ${actual.browserVersion ?? ''}`.trim() : undefined,
      capabilities: { requested: parse(caps.requested), actual },
      metadata: toObject((r[4] as string[] | null) ?? []),
      upstream: withoutSecrets(toObject((r[5] as string[] | null) ?? [])),
      downstream: toObject((r[6] as string[] | null) ?? []),
      lastCode: last ? toObject(last[1]).code : undefined,
      log: withLog ? await readLog(ctx, id) : undefined,
    });
  }
  return views.sort((x, y) => (y.status.queuedAt ?? '').localeCompare(x.status.queuedAt ?? ''));
}
