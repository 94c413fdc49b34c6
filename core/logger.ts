// The logger roles receive. Structured: a message plus fields. The runtime
// backs it with pino (JSON when stdout is not a TTY, readable when it is).

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry these fields (e.g. { role: 'proxy' }). */
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything (for tests and for the CLI's quiet commands). */
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
