// The one interface every Redis backend implements. Adapters are thin
// translations of a client library onto it; everything else (typed helpers,
// scripts, contracts) lives in core and works the same on every adapter.

/** An argument as it goes over the wire. Numbers are sent as their decimal text. */
export type Arg = string | number;

/**
 * A reply, normalised the same way by every adapter (RESP2 shapes):
 * status and bulk strings → string, integers → number, nil → null,
 * arrays → arrays (nested as Redis nests them). Error replies are thrown as
 * ReplyError, never returned — except inside pipeline results, see there.
 */
export type Reply = string | number | null | Reply[];

/** One command: its name and arguments, e.g. ['HSET', 'k', 'f', 1]. */
export type Command = [name: string, ...args: Arg[]];

/**
 * A Redis error reply ("ERR ...", "NOSCRIPT ...", "WRONGTYPE ..."): what a
 * backend's calls reject with when Redis answers with an error, and what an
 * adapter makes of its client's error replies. `code` is the reply's first word.
 *
 * @example
 * try {
 *   await ctx.backend.send(['INCR', ctx.keys.job({ name: 'nightly' })]);
 * } catch (err) {
 *   if (err instanceof ReplyError && err.code === 'WRONGTYPE') ctx.logger.warn('job is not a counter');
 *   else throw err;
 * }
 *
 * @example
 * // in an adapter: a client's error reply becomes coord's
 * throw new ReplyError('NOSCRIPT No matching script. Please use EVAL.');
 */
export class ReplyError extends Error {
  override readonly name = 'ReplyError';
  /** The first word of the reply, e.g. 'ERR', 'NOSCRIPT', 'WRONGTYPE'. */
  readonly code: string;
  constructor(message: string) {
    super(message);
    this.code = message.split(' ', 1)[0] ?? 'ERR';
  }
}

export { ConnectionError } from './errors.ts';

/** A Lua script as the registry hands it to an adapter. */
export interface ScriptSource {
  /** The script's name, e.g. 'browser-grid/selectWorker' (for errors and logs). */
  readonly name: string;
  /** The Lua source. */
  readonly lua: string;
  /** SHA1 hex of `lua`, for EVALSHA. */
  readonly sha: string;
}

/** What an adapter can do; the conformance suite skips only from these. */
export interface BackendCapabilities {
  /** Talks to a Redis Cluster (multi-key calls must share one slot). */
  readonly cluster: boolean;
  /** Consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM. */
  readonly streamGroups: boolean;
  /** Keys expire by themselves, in real time (false only for a frozen test clock). */
  readonly expiry: boolean;
  /** Survives and reports a server restart (false for in-process backends). */
  readonly reconnect: boolean;
}

/** A message delivered to a subscriber. `pattern` is set for PSUBSCRIBE deliveries. */
export interface PubSubMessage {
  readonly channel: string;
  readonly message: string;
  readonly pattern?: string;
}

/** A dedicated pub/sub connection. */
export interface Subscriber {
  subscribe(...channels: string[]): Promise<void>;
  unsubscribe(...channels: string[]): Promise<void>;
  psubscribe(...patterns: string[]): Promise<void>;
  punsubscribe(...patterns: string[]): Promise<void>;
  /** Registers the message handler; returns a function that removes it. */
  onMessage(handler: (msg: PubSubMessage) => void): () => void;
  close(): Promise<void>;
}

/**
 * A dedicated connection for blocking commands (BLPOP, BRPOP, BLMOVE,
 * BRPOPLPUSH, BZPOPMIN, XREAD BLOCK …), so a blocked call never stalls the
 * shared one. One blocking call at a time per connection.
 */
export interface BlockingConnection {
  send(command: Command): Promise<Reply>;
  close(): Promise<void>;
}

/** Connection state changes, one event per change (never carries a password). */
export type BackendState = 'connecting' | 'ready' | 'reconnecting' | 'closed';

/**
 * The one interface every Redis backend implements, whatever the client
 * underneath (ioredis, node-redis, embedded): single commands, transactions,
 * pipelines, scripts, SCAN over every master, pub/sub and blocking
 * connections, and connection state. A role gets it as `ctx.backend`.
 */
export interface Backend {
  /** Adapter name: 'ioredis', 'node-redis', 'embedded', or a third party's. */
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  /** The URL with any password masked, for logs. */
  readonly displayUrl: string;

  /** Resolves once the backend has answered a PING. Rejects with ConnectionError. */
  ready(): Promise<void>;

  /** One command on the shared connection. */
  send(command: Command): Promise<Reply>;

  /** EVALSHA, falling back to EVAL on NOSCRIPT. */
  evalScript(script: ScriptSource, keys: readonly string[], args: readonly Arg[]): Promise<Reply>;

  /** MULTI … EXEC: all or nothing; replies in order. An error reply of one command rejects the whole call. */
  multi(commands: readonly Command[]): Promise<Reply[]>;

  /** Commands sent together without atomicity; each result is its reply or the ReplyError it got. */
  pipeline(commands: readonly Command[]): Promise<(Reply | ReplyError)[]>;

  /** Every key matching a glob pattern, each exactly once, on every master (SCAN MATCH … COUNT …). */
  scan(pattern: string, count?: number): AsyncIterable<string>;

  /** A new pub/sub connection. */
  subscriber(): Promise<Subscriber>;

  /** A new connection for blocking commands. */
  blocking(): Promise<BlockingConnection>;

  /** Connection state changes. Returns a function that removes the listener. */
  onState(listener: (state: BackendState, detail?: string) => void): () => void;

  /**
   * Closes every connection this backend opened. Idempotent. Every call still
   * in flight — also one held while Redis is unreachable — and every later one
   * rejects with ConnectionError (COORD_ERR_BACKEND_CLOSED): a process that
   * stops with Redis gone closes its backend so its roles' stops go on.
   */
  close(): Promise<void>;
}

/** How a backend is made from a URL and options; one per adapter. */
export interface BackendOptions {
  /** redis://, rediss:// (TLS), redis+cluster://host:port,host:port, redis+sentinel://host:port,…/MASTER_NAME or embedded:// (or undefined for embedded). */
  url?: string;
  /** Name shown in CLIENT LIST. */
  clientName?: string;
  /** Called once per connection state change (already masked). */
  log?: (line: string) => void;
  /**
   * TLS settings for rediss:// URLs (ignored for redis://): a CA bundle to
   * trust, a client certificate and its key (for servers with
   * tls-auth-clients), the name the server's certificate must carry, and
   * whether to verify that certificate (default true). Files are PEM paths.
   */
  tls?: { caFile?: string; certFile?: string; keyFile?: string; servername?: string; rejectUnauthorized?: boolean };
  /** The sentinels' own credentials for a redis+sentinel:// URL (the URL's are the data nodes'). */
  sentinel?: { username?: string; password?: string };
}

/**
 * Makes a backend from a URL and options: what an adapter exports
 * (createIoredisBackend, createNodeRedisBackend, createEmbeddedBackend). It
 * connects in the background; `ready()` says when it can serve.
 */
export type BackendFactory = (options: BackendOptions) => Backend;
