// The connection lifecycle the Redis client adapters (ioredis, node-redis)
// share: the parsed URL and its state reporting, ready() as one first PING,
// one connection per subscriber and per blocking connection, each closed by
// close() before the shared one, and every error translated the same way. A
// subclass says only how its library opens, sends on and ends a connection.
import {
  ConnectionError,
  type Arg,
  type Backend,
  type BackendCapabilities,
  type BackendOptions,
  type BackendState,
  type BlockingConnection,
  type Command,
  type Reply,
  type ReplyError,
  type ScriptSource,
  type Subscriber,
} from '../../core/backend.ts';
import { backendError, type ErrorKinds } from './backend-error.ts';
import { ConnectionState } from './connection-state.ts';
import { evalWithFallback } from './eval-script.ts';
import { readyOnce } from './first-ping.ts';
import { MessageHandlers } from './message-handlers.ts';
import { PendingCalls } from './pending-calls.ts';
import { toReply } from './reply.ts';
import { logLabel, parseServerUrl, type ServerUrl } from './server-url.ts';

/** A subscriber's own connection, its message handlers and its closer. */
export interface SubscriberParts<Connection> {
  connection: Connection;
  handlers: MessageHandlers;
  close: () => Promise<void>;
}

export abstract class RedisClientBackend<Connection> implements Backend {
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  readonly displayUrl: string;

  protected readonly parsed: ServerUrl;
  protected readonly options: BackendOptions;
  protected readonly state: ConnectionState;
  /** The shared connection: opened by the subclass's constructor, ended last by close(). */
  protected abstract readonly main: Connection;
  readonly #errorKinds: ErrorKinds;
  /** Closers of the subscriber and blocking connections still open. */
  readonly #connections = new Set<() => Promise<void>>();
  readonly #firstPing: () => Promise<void>;
  /** Every call in flight on any of the connections, rejected by close() (see held()). */
  readonly #calls = new PendingCalls();
  /** Redis has answered once: from then on a call waits through reconnects, as the client library does. */
  #reached = false;
  #closing: Promise<void> | undefined;

  constructor(name: string, options: BackendOptions, errorKinds: ErrorKinds) {
    this.name = name;
    this.parsed = parseServerUrl(name, options);
    this.options = options;
    this.#errorKinds = errorKinds;
    this.displayUrl = this.parsed.display;
    this.capabilities = { cluster: this.parsed.kind === 'cluster', streamGroups: true, expiry: true, reconnect: true };
    this.state = new ConnectionState(logLabel(name, this.parsed), options.log, this.parsed.password);
    this.state.set('connecting');
    this.#firstPing = readyOnce(() => this.ping(), { display: this.displayUrl, state: this.state, secret: this.parsed.password });
    this.state.on((state) => {
      if (state === 'ready') this.#reached = true;
    });
  }

  /** A new connection named `name` (CLIENT SETNAME); its errors are noted, never thrown. */
  protected abstract connect(name: string | undefined): Connection;
  /** The library's raw reply to `command` on `connection`. */
  protected abstract call(connection: Connection, command: Command): Promise<unknown>;
  /** Ends a connection now: calls in flight on it are rejected with closedError(). */
  protected abstract end(connection: Connection): Promise<void>;
  /** The first PING on the shared connection, once it is up. */
  protected abstract ping(): Promise<unknown>;
  abstract multi(commands: readonly Command[]): Promise<Reply[]>;
  abstract pipeline(commands: readonly Command[]): Promise<(Reply | ReplyError)[]>;
  abstract scan(pattern: string, count?: number): AsyncIterable<string>;
  abstract subscriber(): Promise<Subscriber>;

  ready(): Promise<void> {
    if (this.#closing) return Promise.reject(this.closedError());
    return this.#firstPing().then(() => {
      this.#reached = true;
    });
  }

  /**
   * Before Redis has answered once, a call first waits for ready(), and fails
   * as it does: with nothing listening that is ConnectionError "cannot reach
   * Redis at …" within READY_TIMEOUT_MS, not a call the client holds forever.
   * After that, a call waits through a lost connection for the reconnect.
   */
  protected async reachable(): Promise<void> {
    if (!this.#reached) await this.ready();
  }

  send(command: Command): Promise<Reply> {
    return this.sendOn(this.main, command);
  }

  evalScript(script: ScriptSource, keys: readonly string[], args: readonly Arg[]): Promise<Reply> {
    return evalWithFallback((command) => this.send(command), script, keys, args);
  }

  async blocking(): Promise<BlockingConnection> {
    const connection = this.#open('blocking');
    return { send: (command) => this.sendOn(connection, command), close: this.#track(connection) };
  }

  onState(listener: (state: BackendState, detail?: string) => void): () => void {
    return this.state.on(listener);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.state.set('closed');
      this.#calls.rejectAll(this.closedError());
      await Promise.all([...this.#connections].map((close) => close()));
      await this.end(this.main);
    })();
    return this.#closing;
  }

  /** A subscriber's connection and handlers, closed by close(); the subclass adds the library's (p)subscribe calls. */
  protected openSubscriber(): SubscriberParts<Connection> {
    const connection = this.#open('sub');
    const handlers = new MessageHandlers((text) => this.state.note(text));
    return { connection, handlers, close: this.#track(connection) };
  }

  /**
   * `call`, unless close() comes first: then it rejects with closedError(). A
   * library may hold a call through an outage and not settle it when its
   * connection is ended (node-redis's (un)subscribe, ioredis's SCAN stream);
   * a process that stops with Redis gone closes its backend to end such calls.
   */
  protected held<T>(call: Promise<T>): Promise<T> {
    return this.#calls.run(call);
  }

  /** `command` on `connection`, its reply in the Backend's shapes, its error translated. */
  protected async sendOn(connection: Connection, command: Command): Promise<Reply> {
    await this.reachable();
    try {
      return toReply(await this.held(this.call(connection, command)));
    } catch (error) {
      throw this.error(error);
    }
  }

  /** Every key that `scanOne` finds on each node in turn, once each (SCAN may return a key twice while the table rehashes). */
  protected async *scanNodes<Node>(nodes: Iterable<Node>, scanOne: (node: Node) => AsyncIterable<string[]>): AsyncIterable<string> {
    await this.reachable();
    const seen = new Set<string>();
    for (const node of nodes) {
      const batches = scanOne(node)[Symbol.asyncIterator]();
      try {
        for (;;) {
          const next = await this.held(batches.next());
          if (next.done) break;
          for (const key of next.value) {
            if (seen.has(key)) continue;
            seen.add(key);
            yield key;
          }
        }
      } catch (error) {
        throw this.error(error);
      } finally {
        // A caller that stopped early, or a close(): the library ends its SCAN (a no-op once it is done).
        void Promise.resolve(batches.return?.()).catch(() => {});
      }
    }
  }

  /** The library's error as the Backend promises it: ReplyError, ConnectionError naming the masked URL, or the error itself. */
  protected error(error: unknown): Error {
    return backendError(error, this.#errorKinds, this.displayUrl, this.parsed.password);
  }

  protected closedError(): ConnectionError {
    return new ConnectionError(`Redis at ${this.displayUrl}: the backend is closed`, { code: 'COORD_ERR_BACKEND_CLOSED' });
  }

  /** A connection of its own for `role`, named after the backend's client name. */
  #open(role: string): Connection {
    if (this.#closing) throw this.closedError();
    return this.connect(this.options.clientName === undefined ? undefined : `${this.options.clientName}:${role}`);
  }

  /** Registers a subscriber or blocking connection so close() ends it; returns its idempotent closer. */
  #track(connection: Connection): () => Promise<void> {
    let closing: Promise<void> | undefined;
    const close = () => {
      this.#connections.delete(close);
      closing ??= this.end(connection);
      return closing;
    };
    this.#connections.add(close);
    return close;
  }
}
