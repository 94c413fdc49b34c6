// The embedded backend: a whole coord deployment in one process, no Redis server.
// Built on ioredis-mock, with its gaps filled in adapters/embedded/ (scripts with
// cjson and Redis's reply rules, blocking commands, streams and consumer groups,
// SCAN, WRONGTYPE). Every backend made with the same embedded://<name> in this
// process shares one dataset: keys, expiries, scripts and pub/sub.
import {
  ConnectionError, ReplyError,
  type Arg, type Backend, type BackendFactory, type BackendOptions, type BackendState, type BlockingConnection, type Command,
  type Reply, type ScriptSource, type Subscriber,
} from '../core/backend.ts';
import { parseRedisUrl, UrlError } from '../core/url.ts';
import { dataset, type Dataset } from './embedded/dataset.ts';
import { engine, type Engine } from './embedded/engine.ts';
import { loadLua, luaLoaded } from './embedded/lua-wasm.ts';
import { toReplyError } from './embedded/reply-error.ts';
import { embeddedSubscriber } from './embedded/subscriber.ts';

/**
 * A backend in this process, without Redis: Redis's commands, Lua scripts,
 * pub/sub, blocking commands and expiry on an in-memory dataset. Backends made
 * with the same name (`embedded://<name>`; none: 'default') share one dataset,
 * as processes share a Redis. Throws UrlError for any other URL. What coord
 * runs on when no Redis is given; tests use it to run roles in one process.
 *
 * @example
 * import { createEmbeddedBackend } from 'coordkit/adapters/embedded';
 * const a = createEmbeddedBackend({ url: 'embedded://test-1' });
 * const b = createEmbeddedBackend({ url: 'embedded://test-1' });
 * await a.send(['SET', 'greeting', 'hi']);
 * await b.send(['GET', 'greeting']); // 'hi'
 */
export const createEmbeddedBackend: BackendFactory = (options: BackendOptions) => {
  const parsed = parseRedisUrl(options.url);
  if (parsed.kind !== 'embedded') {
    throw new UrlError(`the embedded backend takes embedded://<name> or no URL, not "${parsed.display}"`);
  }
  return new EmbeddedBackend(dataset(parsed.name), parsed.display, options);
};

/** A command as the engine takes it: strings only, numbers in decimal. */
function toArgs(command: Command): string[] {
  if (!Array.isArray(command) || command.length === 0 || typeof command[0] !== 'string' || command[0] === '') {
    throw new ReplyError(`ERR a command is [name, ...args] with a non-empty name, got ${JSON.stringify(command)}`);
  }
  return command.map((arg) => {
    if (typeof arg === 'string') return arg;
    if (typeof arg === 'number' && Number.isFinite(arg)) return String(arg);
    throw new ReplyError(`ERR command ${command[0]}: arguments are strings or finite numbers, got ${JSON.stringify(arg)}`);
  });
}

class EmbeddedBackend implements Backend {
  readonly name = 'embedded';
  readonly capabilities = { cluster: false, streamGroups: true, expiry: true, reconnect: false } as const;
  readonly displayUrl: string;
  private readonly engine: Engine;
  private readonly closing = new AbortController();
  private readonly subscribers = new Set<Subscriber>();
  private readonly listeners = new Set<(state: BackendState, detail?: string) => void>();
  private closed = false;

  constructor(
    private readonly ds: Dataset,
    displayUrl: string,
    private readonly options: BackendOptions,
  ) {
    this.displayUrl = displayUrl;
    this.engine = engine(ds);
  }

  async ready(): Promise<void> {
    await this.open();
  }

  async send(command: Command): Promise<Reply> {
    if (!luaLoaded()) await this.open();
    this.ensureOpen();
    return this.engine.run(toArgs(command), this.closing.signal);
  }

  async evalScript(script: ScriptSource, keys: readonly string[], args: readonly Arg[]): Promise<Reply> {
    const rest = [keys.length, ...keys, ...args];
    try {
      return await this.send(['EVALSHA', script.sha, ...rest]);
    } catch (error) {
      if (!(error instanceof ReplyError && error.code === 'NOSCRIPT')) throw error;
      return this.send(['EVAL', script.lua, ...rest]);
    }
  }

  async multi(commands: readonly Command[]): Promise<Reply[]> {
    await this.open();
    const all = commands.map(toArgs);
    // As Redis: an unknown command discards the whole transaction before anything runs.
    const unknown = all.find((args) => !this.engine.knows(args[0]!.toLowerCase()));
    if (unknown) throw new ReplyError(`EXECABORT Transaction discarded because of previous errors: unknown command '${unknown[0]}'`);
    const results = all.map((args) => {
      try {
        return this.engine.exec(args);
      } catch (error) {
        return toReplyError(error);
      }
    });
    const failed = results.find((r): r is ReplyError => r instanceof ReplyError);
    if (failed) throw failed;
    return results as Reply[];
  }

  async pipeline(commands: readonly Command[]): Promise<(Reply | ReplyError)[]> {
    await this.open();
    const results: (Reply | ReplyError)[] = [];
    for (const command of commands) {
      try {
        results.push(await this.send(command));
      } catch (error) {
        if (error instanceof ConnectionError) throw error;
        results.push(toReplyError(error));
      }
    }
    return results;
  }

  async *scan(pattern: string, count = 100): AsyncIterable<string> {
    let cursor = '0';
    do {
      const [next, keys] = (await this.send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', count])) as [string, string[]];
      cursor = next;
      yield* keys;
    } while (cursor !== '0');
  }

  async subscriber(): Promise<Subscriber> {
    this.ensureOpen();
    const subscriber: Subscriber = embeddedSubscriber(this.ds.connect(), () => this.subscribers.delete(subscriber));
    this.subscribers.add(subscriber);
    return subscriber;
  }

  async blocking(): Promise<BlockingConnection> {
    await this.open();
    const connection = new AbortController();
    const onBackendClose = () => connection.abort();
    this.closing.signal.addEventListener('abort', onBackendClose, { once: true });
    return {
      send: async (command) => {
        if (connection.signal.aborted) throw new ConnectionError('the blocking connection is closed');
        return this.engine.run(toArgs(command), connection.signal);
      },
      close: async () => {
        this.closing.signal.removeEventListener('abort', onBackendClose);
        connection.abort();
      },
    };
  }

  onState(listener: (state: BackendState, detail?: string) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    await Promise.all([...this.subscribers].map((s) => s.close()));
    this.options.log?.(`${this.displayUrl}: closed`);
    for (const listener of [...this.listeners]) listener('closed');
  }

  /** Open, with the Lua engine loaded (once per process: it compiles a WebAssembly module). */
  private async open(): Promise<void> {
    this.ensureOpen();
    if (!luaLoaded()) await loadLua();
    this.ensureOpen();
  }

  private ensureOpen(): void {
    if (this.closed) throw new ConnectionError(`${this.displayUrl} is closed`);
  }
}
