// Reads a session's log stream back (scripts.ts appendLog writes it).
import type { Ctx } from '../context.ts';

/** One entry as read back from the stream. */
export interface LogEntry {
  id: string;
  time: string;
  component: string;
  level: string;
  code: string;
  meta: string;
}

/** The session's log, oldest first. */
export async function readLog(ctx: Pick<Ctx, 'backend' | 'keys'>, sessionId: string): Promise<LogEntry[]> {
  return entriesOf((await ctx.backend.send(['XRANGE', ctx.keys.sessionLog({ sessionId }), '-', '+'])) as [string, string[]][]);
}

/** Several sessions' logs in one pipeline, oldest first each. */
export async function readLogs(ctx: Pick<Ctx, 'backend' | 'keys'>, sessionIds: string[]): Promise<LogEntry[][]> {
  if (!sessionIds.length) return [];
  const raw = (await ctx.backend.pipeline(sessionIds.map((sessionId) => ['XRANGE', ctx.keys.sessionLog({ sessionId }), '-', '+']))) as [string, string[]][][];
  return raw.map(entriesOf);
}

function entriesOf(raw: [string, string[]][]): LogEntry[] {
  return raw.map(([id, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return { id, time: new Date(Number(id.split('-')[0])).toISOString(), component: f.component ?? '', level: f.level ?? '', code: f.code ?? '', meta: f.meta ?? '' };
  });
}
