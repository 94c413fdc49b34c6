// The logger roles receive. Structured: a message plus fields. The runtime
// backs it with pino (JSON when stdout is not a TTY, readable when it is).

/** A log line's level, from the most to the least verbose. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * The logger roles receive (`ctx.logger`): a message plus structured fields.
 * The runtime backs it with pino (JSON lines when stdout is not a terminal,
 * readable ones when it is); tests pass memoryLogger or silentLogger.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry these fields (e.g. { role: 'proxy' }). */
  child(bindings: Record<string, unknown>): Logger;
}

/**
 * A logger that drops everything (for tests and for the CLI's quiet commands),
 * and the default of a function whose caller may not want its lines.
 *
 * @example
 * export async function syncJobs(ctx: RoleContext, jobs: readonly Job[], logger: Logger = silentLogger): Promise<void> {
 *   for (const job of jobs) await ctx.backend.send(['SADD', ctx.keys.jobs(), job.id]);
 *   logger.info('jobs synced', { count: jobs.length });
 * }
 */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

/**
 * A logger that keeps lines in memory, for tests that assert on logs.
 *
 * @example
 * const logger = memoryLogger();
 * await startProcess({ plugins: [plugin], config, logger });
 * logger.lines.some((l) => l.msg === 'role started');
 */
export function memoryLogger(lines: { level: LogLevel; msg: string; fields: Record<string, unknown> }[] = []): Logger & { lines: typeof lines } {
  const make = (bindings: Record<string, unknown>): Logger => ({
    debug: (msg, fields) => lines.push({ level: 'debug', msg, fields: { ...bindings, ...fields } }),
    info: (msg, fields) => lines.push({ level: 'info', msg, fields: { ...bindings, ...fields } }),
    warn: (msg, fields) => lines.push({ level: 'warn', msg, fields: { ...bindings, ...fields } }),
    error: (msg, fields) => lines.push({ level: 'error', msg, fields: { ...bindings, ...fields } }),
    child: (more) => make({ ...bindings, ...more }),
  });
  return Object.assign(make({}), { lines });
}
