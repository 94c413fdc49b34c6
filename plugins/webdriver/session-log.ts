// Appends to a session's log stream (component, level, code, meta) and counts
// the entry in metrics:sessions:log:{level}, in one script call.
import { codes, type Code, type Component } from './codes.ts';
import { LOG_MAX_LENGTH, type Ctx } from './context.ts';

export async function appendLog(ctx: Ctx, sessionId: string, component: Component, code: Code, meta = ''): Promise<void> {
  const level = codes[code];
  await ctx.scripts.run('appendLog', {
    keys: { log: { sessionId }, counts: { level } },
    args: { component, level, code, meta, maxLen: LOG_MAX_LENGTH },
  });
}

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
