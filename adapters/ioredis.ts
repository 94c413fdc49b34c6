// The ioredis adapter: one shared connection (a Redis, or a Cluster that routes
// each command by its key), plus a connection of its own for every subscriber
// and every blocking connection. Reconnection is ioredis's own, paced by
// retryDelay; this file only translates calls, replies, errors and events.
// Behind Sentinel each connection asks the sentinels for the master whenever
// it (re)connects, and drops a master that was demoted (READONLY) to ask again.
import type CalculateSlot from 'cluster-key-slot';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { lazyModule } from '../core/lazy-module.ts';
import { ReplyError, type Arg, type BackendFactory, type BackendOptions, type Command, type Reply, type Subscriber } from '../core/backend.ts';
import { paceSubscriberPicks } from './ioredis-cluster-subscriber.ts';
import type { ErrorKinds } from './support/backend-error.ts';
import { RedisClientBackend } from './support/client-backend.ts';
import { pipelineBySend } from './support/concurrent-pipeline.ts';
import { errorText } from './support/error-text.ts';
import { PendingCalls } from './support/pending-calls.ts';
import { toReply } from './support/reply.ts';
import { READY_TIMEOUT_MS, retryDelay, SENTINEL_MAX_RETRY_MS } from './support/retry.ts';
import { isAllSentinelsError, sentinelErrorText } from './support/sentinel-errors.ts';
import { parseServerUrl } from './support/server-url.ts';
import { tlsOptions } from './support/tls.ts';

// Both are CommonJS, so required rather than imported: Node's ESM import of a
// CommonJS package parses its modules for their export names, which cost
// ~100 ms of CPU each time the CLI connects (`coord grid status`).
const ioredis = lazyModule<typeof import('ioredis')>('ioredis');
const calculateSlot = lazyModule<typeof CalculateSlot>('cluster-key-slot');

type Client = Redis | Cluster;

/** The longest close() waits for ioredis to report a socket closed. */
const END_WAIT_MS = 1000;

/** A client and the calls in flight on it. */
interface Connection {
  client: Client;
  pending: PendingCalls;
}

/**
 * A backend on ioredis: one shared connection (a single server, or a Cluster
 * that routes each command by its key, or the master Sentinel names), and a
 * connection of its own for each subscriber and blocking connection.
 * Reconnection is ioredis's own. Takes redis://, rediss://, cluster and
 * Sentinel URLs (no embedded://). createBackend picks it by default for a URL;
 * import it directly to skip that choice.
 *
 * @example
 * import { createIoredisBackend } from 'coordkit/adapters/ioredis';
 * const backend = createIoredisBackend({ url: 'redis://127.0.0.1:6379', clientName: 'my-app' });
 * await backend.ready();
 * await backend.send(['PING']); // 'PONG'
 * await backend.close();
 */
export const createIoredisBackend: BackendFactory = (options) => new IoredisBackend(options);

const ioredisErrors: ErrorKinds = {
  isReply: (error): error is Error => error instanceof ioredis().ReplyError,
  isConnection: (error) =>
    error instanceof Error && (error.message === 'Connection is closed.' || error.name === 'MaxRetriesPerRequestError'),
};

class IoredisBackend extends RedisClientBackend<Connection> {
  readonly #redisOptions: RedisOptions;
  protected readonly main: Connection;

  constructor(options: BackendOptions) {
    // A missing CA file is refused before the backend logs that it is connecting.
    const tls = tlsOptions(parseServerUrl('ioredis', options), options.tls);
    super('ioredis', options, ioredisErrors);
    // A promoted replica serves within seconds of a failover: behind Sentinel
    // a lost master is asked for again at least every second.
    const maxDelay = this.parsed.kind === 'sentinel' ? SENTINEL_MAX_RETRY_MS : Infinity;
    this.#redisOptions = {
      username: this.parsed.username,
      password: this.parsed.password,
      db: this.parsed.db,
      tls,
      retryStrategy: (times) => Math.min(retryDelay(times - 1), maxDelay),
      // Commands wait for the reconnect instead of failing after 20 attempts;
      // ready() is where a caller learns that Redis is not there.
      maxRetriesPerRequest: null,
      connectTimeout: READY_TIMEOUT_MS,
      // How long disconnect() lets a socket close by itself before destroying
      // it. ioredis arms this timer even for a socket that is already gone (a
      // close() between reconnect attempts), so it decides how soon the process can exit.
      disconnectTimeout: 200,
    };
    this.main = this.connect(options.clientName);
    this.main.client.on('ready', () => this.state.set('ready'));
    this.main.client.on('close', () => this.state.lost());
  }

  get #client(): Client {
    return this.main.client;
  }

  async multi(commands: readonly Command[]): Promise<Reply[]> {
    if (commands.length === 0) return [];
    await this.reachable();
    const transaction = this.#client.multi();
    for (const [name, ...args] of commands) transaction.call(name, ...args);
    let results: [Error | null, unknown][] | null;
    try {
      results = await this.main.pending.run(transaction.exec());
    } catch (error) {
      // EXECABORT: a command was refused while queueing; its own error says which and why.
      const cause = (error as { previousErrors?: unknown[] }).previousErrors?.[0];
      throw this.error(cause ?? error);
    }
    if (results === null) throw new ReplyError('EXECABORT Transaction discarded');
    return results.map(([error, value]) => {
      if (error) throw this.error(error);
      return toReply(value);
    });
  }

  async pipeline(commands: readonly Command[]): Promise<(Reply | ReplyError)[]> {
    if (commands.length === 0) return [];
    // ioredis pipelines on a cluster need every key on one node; concurrent
    // sends are routed one by one and still travel together.
    if (this.#client instanceof ioredis().Cluster) return pipelineBySend((command) => this.send(command), commands);
    await this.reachable();
    const pipeline = this.#client.pipeline();
    for (const [name, ...args] of commands) pipeline.call(name, ...args);
    let results: [Error | null, unknown][] | null;
    try {
      results = await this.main.pending.run(pipeline.exec());
    } catch (error) {
      throw this.error(error);
    }
    return (results ?? []).map(([error, value]) => {
      if (!error) return toReply(value);
      const mapped = this.error(error);
      if (mapped instanceof ReplyError) return mapped;
      throw mapped;
    });
  }

  async *scan(pattern: string, count = 100): AsyncIterable<string> {
    yield* this.scanNodes(await this.#masters(), (node) => node.scanStream({ match: pattern, count }) as AsyncIterable<string[]>);
  }

  async subscriber(): Promise<Subscriber> {
    const { connection, handlers, close } = this.openSubscriber();
    const { client } = connection;
    client.on('message', (channel: string, message: string) => handlers.deliver({ channel, message }));
    client.on('pmessage', (pattern: string, channel: string, message: string) =>
      handlers.deliver({ channel, message, pattern }),
    );
    const run = async (call: () => Promise<unknown>) => {
      await this.reachable();
      try {
        await connection.pending.run(call());
      } catch (error) {
        throw this.error(error);
      }
    };
    return {
      subscribe: (...channels) => (channels.length ? run(() => client.subscribe(...channels)) : Promise.resolve()),
      // With no arguments these leave every channel (or pattern), as in Redis.
      unsubscribe: (...channels) => run(() => client.unsubscribe(...channels)),
      psubscribe: (...patterns) => (patterns.length ? run(() => client.psubscribe(...patterns)) : Promise.resolve()),
      punsubscribe: (...patterns) => run(() => client.punsubscribe(...patterns)),
      onMessage: (handler) => handlers.add(handler),
      close,
    };
  }

  protected connect(connectionName: string | undefined): Connection {
    const redisOptions: RedisOptions = { ...this.#redisOptions, connectionName };
    const client =
      this.parsed.kind === 'cluster'
        ? new (ioredis().Cluster)(this.parsed.hosts, { redisOptions, clusterRetryStrategy: (times) => retryDelay(times - 1) })
        : this.parsed.kind === 'sentinel'
          ? new (ioredis().Redis)({ ...redisOptions, ...this.#sentinelOptions(this.parsed.masterName) })
          : new (ioredis().Redis)({ ...redisOptions, host: this.parsed.hosts[0]!.host, port: this.parsed.hosts[0]!.port });
    client.on('error', (error: unknown) => this.#noteError(error));
    // Why a sentinel did not name a master (unreachable, refused our password, knows no such name).
    if (this.parsed.kind === 'sentinel') client.on('sentinelError', (error: unknown) => this.#noteError(error));
    if (client instanceof ioredis().Cluster) {
      client.on('node error', (error: unknown) => this.#noteError(error));
      paceSubscriberPicks(client);
    }
    return { client, pending: new PendingCalls() };
  }

  protected ping(): Promise<unknown> {
    return this.main.pending.run(this.#client.call('PING'));
  }

  protected call({ client, pending }: Connection, [name, ...args]: Command): Promise<unknown> {
    const target = client instanceof ioredis().Cluster ? (publisherFor(client, name, args) ?? client) : client;
    return pending.run(target.call(name, ...args));
  }

  /** Ends a connection now: calls in flight are rejected, and it waits until the socket is down. */
  protected async end({ client, pending }: Connection): Promise<void> {
    pending.rejectAll(this.closedError());
    if (client.status === 'end') return;
    // ioredis says 'end' once it has closed its socket(s); between reconnect
    // attempts there is no socket, and it says nothing — so the wait is bounded.
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => {
      client.once('end', () => resolve());
      timer = setTimeout(resolve, ['reconnecting', 'wait', 'close'].includes(client.status) ? 0 : END_WAIT_MS);
    });
    client.disconnect();
    await ended;
    clearTimeout(timer);
  }

  /** The master named `masterName` as the URL's sentinels tell it, with the sentinels' own credentials and TLS. */
  #sentinelOptions(masterName: string): RedisOptions {
    const { tls } = this.#redisOptions;
    return {
      sentinels: this.parsed.hosts,
      name: masterName,
      sentinelUsername: this.options.sentinel?.username,
      sentinelPassword: this.options.sentinel?.password,
      // rediss+sentinel://: TLS to the sentinels and to the data nodes they name.
      sentinelTLS: tls,
      enableTLSForSentinelMode: tls !== undefined,
      sentinelRetryStrategy: (times) => Math.min(retryDelay(times - 1), SENTINEL_MAX_RETRY_MS),
      // A master the sentinels demoted while it stayed up answers writes with READONLY: reconnect (asking
      // the sentinels again) and resend the command. Not ioredis's failoverDetector: a +switch-master that
      // comes while a connection is being re-established ends that connection for good (ioredis 5.11).
      reconnectOnError: (error) => (/^READONLY/.test(error.message) ? 2 : false),
    };
  }

  #noteError(error: unknown): void {
    if (this.parsed.kind === 'sentinel') {
      // "All sentinels are unreachable" follows each sentinel's own error, which says why; that one stays.
      if (isAllSentinelsError(error) && this.state.lastError !== undefined) return;
      const text = sentinelErrorText(error, this.parsed.masterName);
      if (text !== undefined) return this.state.noteError(text);
    }
    // A cluster that reached no node says "Failed to refresh slots cache." (its
    // probes swallow the socket errors); say that in words users know.
    if (error instanceof Error && error.name === 'ClusterAllFailedError') {
      const last = (error as { lastNodeError?: unknown }).lastNodeError;
      this.state.noteError(`no cluster node answered${last ? ` (${errorText(last)})` : ''}`);
      return;
    }
    // "Connection is closed." only says a command met a dead connection; an
    // error noted before it (ECONNREFUSED, WRONGPASS…) says why, so it stays.
    if (ioredisErrors.isConnection(error) && this.state.lastError !== undefined) return;
    this.state.noteError(error);
  }

  /** The connections to SCAN: the one server, or every master of the cluster. */
  async #masters(): Promise<Redis[]> {
    if (!(this.#client instanceof ioredis().Cluster)) return [this.#client];
    // The node list is known once the cluster has loaded its slots; a PING waits for that.
    await this.send(['PING']);
    return this.#client.nodes('master');
  }
}

/**
 * On a cluster, the master that serves a PUBLISH's channel as if it were a key.
 * PUBLISH has no key, so ioredis would pick a node at random per call, and
 * messages sent through different nodes can overtake each other on the way to
 * a subscriber; one node per channel keeps one publisher's messages in order.
 */
function publisherFor(cluster: Cluster, name: string, args: Arg[]): Redis | undefined {
  if (name.toUpperCase() !== 'PUBLISH' || args.length === 0) return undefined;
  const nodeKey = cluster.slots[calculateSlot()(String(args[0]))]?.[0];
  if (nodeKey === undefined) return undefined; // slots not loaded yet: any node will do
  return cluster.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === nodeKey);
}
