// The runtime's Logger (core/logger.ts), backed by pino: JSON lines for
// machines (stdout not a TTY, or format=json), readable lines for people
// (a TTY, or format=pretty). pino-pretty runs as a synchronous stream in this
// thread, not as a worker transport, so it behaves the same on Deno and
// every line is written before the process exits. pino is required, not
// imported (CommonJS), and a short command's logger (lazy) loads it with its
// first line: `coord grid status`, which logs nothing when all goes well, does
// not pay for it.
import type Pino from 'pino';
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { GlobalConfig } from './plugin.ts';
import { lazyModule } from './lazy-module.ts';
import type { Logger, LogLevel } from './logger.ts';
import { stderrIsTTY, stdoutIsTTY } from './platform.ts';

/**
 * How createLogger writes: the level, JSON or readable lines (`auto`: readable
 * on a terminal), and where.
 */
export interface LogOptions {
  level?: GlobalConfig['log']['level'];
  format?: GlobalConfig['log']['format'];
  /** Where lines go (default: standard output). Tests pass a stream to read them. */
  destination?: DestinationStream;
  /** Write to standard error instead (commands whose standard output is their result). */
  stderr?: boolean;
  /** Whether the destination is a terminal (default: whether stdout is one). */
  tty?: boolean;
  /**
   * Load pino with the first line written at an enabled level, not now: for a
   * short command that usually writes none (`coord grid status`). A process
   * that runs (`coord run`, `coord load run`) makes it at once, so its first
   * warning on a stop, say, does not wait for pino to load.
   */
  lazy?: boolean;
}

// Loaded only for readable output: a command whose log goes to a pipe (or is JSON) does not pay for it.
const prettyStream = lazyModule<typeof PinoPretty>('pino-pretty');
const pinoModule = lazyModule<typeof Pino>('pino');

/**
 * The logger `coord run` uses, backed by pino: JSON lines for machines
 * (standard output not a terminal, or format 'json'), one readable line per
 * event for people (a terminal, or format 'pretty'), each led by its plugin and
 * role. Every line is written before the process exits.
 *
 * @example
 * const config = loadConfig({ plugins: [plugin], env: process.env });
 * const logger = createLogger({ level: config.log.level, format: config.log.format });
 * const handle = await startProcess({ plugins: [plugin], config, logger });
 */
export function createLogger(options: LogOptions = {}): Logger {
  if (!options.lazy) return pinoLogger(options);
  const level = LEVELS.indexOf(options.level ?? 'info');
  return deferred(() => pinoLogger(options), (wanted) => LEVELS.indexOf(wanted) >= level);
}

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** A logger made by `make` on its first line at a level `writes` (its children's too); lines below it are dropped here. */
function deferred(make: () => Logger, writes: (level: LogLevel) => boolean): Logger {
  let made: Logger | undefined;
  const logger = () => (made ??= make());
  const at = (level: LogLevel): Logger[LogLevel] => (writes(level) ? (msg, fields) => logger()[level](msg, fields) : () => {});
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (bindings) => deferred(() => logger().child(bindings), writes),
  };
}

function pinoLogger(options: LogOptions): Logger {
  const pino = pinoModule();
  const fd = options.stderr ? 2 : 1;
  const tty = options.tty ?? (options.stderr ? stderrIsTTY() : stdoutIsTTY());
  const pretty = options.format === 'pretty' || (options.format !== 'json' && tty);
  const level = options.level ?? 'info';
  const stream = pretty
    ? prettyStream()({
        sync: true,
        colorize: tty,
        destination: options.destination ?? fd,
        translateTime: 'SYS:HH:MM:ss.l',
        // One line per event, led by who said it: '[12:00:01.234] INFO: browser-grid/proxy role started {"port":8080}'.
        singleLine: true,
        messageFormat: (line, messageKey) => {
          const who = [line.plugin, line.role].filter(Boolean).join('/');
          return who ? `${who} ${String(line[messageKey])}` : String(line[messageKey]);
        },
        ignore: 'pid,hostname,plugin,role',
      })
    : (options.destination ?? pino.destination({ dest: fd, sync: true }));
  return wrap(pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, stream));
}

function wrap(log: PinoLogger): Logger {
  return {
    debug: (msg, fields) => log.debug(fields ?? {}, msg),
    info: (msg, fields) => log.info(fields ?? {}, msg),
    warn: (msg, fields) => log.warn(fields ?? {}, msg),
    error: (msg, fields) => log.error(fields ?? {}, msg),
    child: (bindings) => wrap(log.child(bindings)),
  };
}
