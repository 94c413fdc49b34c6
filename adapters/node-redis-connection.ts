// One @redis/client connection (a client, or a cluster) as the node-redis
// adapter uses it. @redis/client gives up on a first connection that fails
// (and a cluster's connect() always does), so the first connection is retried
// here, on timers that close() clears; once it has been ready, the library's
// own reconnectStrategy takes over with the same pacing. Behind Sentinel the
// library's sentinel client finds the master, follows +switch-master to the
// promoted replica, and moves its pub/sub connection there with its subscriptions.
import {
  createClient,
  createCluster,
  createSentinel,
  type RedisClientOptions,
  type RedisClusterOptions,
  type RedisSentinelOptions,
} from '@redis/client';
import { ConnectionError, type BackendOptions } from '../core/backend.ts';
import { READY_TIMEOUT_MS, retryDelay, SENTINEL_MAX_RETRY_MS } from './support/retry.ts';
import { TOPOLOGY_REFRESH_MS, watchClusterTopology } from './node-redis-cluster-watch.ts';
import { fromSentinel } from './support/sentinel-errors.ts';
import type { ServerUrl } from './support/server-url.ts';
import { tlsOptions } from './support/tls.ts';

export type SingleClient = ReturnType<typeof createSingle>;
export type ClusterClient = ReturnType<typeof createClusterClient>;
export type SentinelClient = ReturnType<typeof createSentinelClient>;

export interface ConnectionEvents {
  /** Any error the client emits (it is noted, never thrown). */
  error(error: unknown): void;
  /** The connection (or, on a cluster, a node's connection) is ready. */
  ready(): void;
  /** The connection was lost after being ready and is being re-established. */
  lost(): void;
}

export class NodeRedisConnection {
  readonly client: SingleClient | ClusterClient | SentinelClient;
  readonly #connected: Promise<void>;
  #rejectConnected: ((error: Error) => void) | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #everReady = false;
  #closed = false;
  #stopWatch: (() => void) | undefined;

  constructor(parsed: ServerUrl, options: BackendOptions, name: string | undefined, events: ConnectionEvents) {
    // Before the first success the library must not retry by itself (its
    // backoff timer could not be cancelled by close()); after it, it should.
    const reconnectStrategy = (retries: number) => (this.#everReady && !this.#closed ? retryDelay(retries - 1) : false);
    const tls = tlsOptions(parsed, options.tls);
    const socket = { connectTimeout: READY_TIMEOUT_MS, reconnectStrategy, ...(tls ? { tls: true as const, ...tls } : {}) };
    const auth = { username: parsed.username, password: parsed.password, name };
    if (parsed.kind === 'sentinel') {
      // The sentinel client retries its first connection itself; a lost master is asked for again at least every second.
      const nodeSocket = { ...socket, reconnectStrategy: (retries: number) => !this.#closed && Math.min(retryDelay(retries - 1), SENTINEL_MAX_RETRY_MS) };
      const sentinelSocket = { connectTimeout: READY_TIMEOUT_MS, ...(tls ? { tls: true as const, ...tls } : {}) };
      this.client = createSentinelClient({
        name: parsed.masterName,
        sentinelRootNodes: parsed.hosts,
        nodeClientOptions: { ...auth, database: parsed.db, socket: nodeSocket },
        sentinelClientOptions: { username: options.sentinel?.username, password: options.sentinel?.password, socket: sentinelSocket },
        // One connection to the master: a blocking call holds only its own backend connection.
        masterPoolSize: 1,
        passthroughClientErrorEvents: true,
      });
    } else {
      this.client =
        parsed.kind === 'cluster'
          ? createClusterClient({
              rootNodes: parsed.hosts.map(({ host, port }) => ({ socket: { host, port } })),
              // A node's client retries at least every second: the library lets a client it destroyed (a
              // dead master that left the slot map) fail its waiting commands only at its next attempt.
              defaults: { ...auth, socket: { ...socket, reconnectStrategy: (retries: number) => reconnectStrategy(retries) && Math.min(retryDelay(retries - 1), TOPOLOGY_REFRESH_MS) } },
            })
          : createSingle({ ...auth, database: parsed.db, socket: { ...socket, ...parsed.hosts[0]! } });
    }

    const noteError = parsed.kind === 'sentinel' ? (error: unknown) => events.error(fromSentinel(error)) : events.error;
    this.client.on('error', noteError);
    if (parsed.kind === 'cluster') {
      this.#stopWatch = watchClusterTopology(this.client as ClusterClient, events.error);
      this.client.on('node-error', events.error);
      this.client.on('connect', () => events.ready());
      this.client.on('node-ready', () => this.#everReady && events.ready());
      // The cluster as a whole is lost only when no master answers (as ioredis says it): one dead master
      // fails the commands of its slots until its replica is promoted, and the others serve meanwhile.
      const cluster = this.client as ClusterClient;
      this.client.on('node-reconnecting', () => this.#everReady && !cluster.masters.some((master) => master.client?.isReady) && events.lost());
    } else {
      this.client.on('ready', () => {
        this.#everReady = true;
        events.ready();
      });
      this.client.on('reconnecting', () => events.lost());
    }

    this.#connected = new Promise<void>((resolve, reject) => {
      this.#rejectConnected = reject;
      const attempt = (n: number) => {
        this.client.connect().then(
          () => {
            this.#everReady = true;
            resolve();
          },
          (error: unknown) => {
            noteError(error);
            if (!this.#closed) this.#retryTimer = setTimeout(() => attempt(n + 1), retryDelay(n));
          },
        );
      };
      attempt(0);
    });
    this.#connected.catch(() => undefined); // callers that never send must not see an unhandled rejection
  }

  /** The client once its first connection is up (commands queue in it while it reconnects later on). */
  async ready(): Promise<SingleClient | ClusterClient | SentinelClient> {
    await this.#connected;
    return this.client;
  }

  /** Ends the connection now: pending commands are rejected, no timer is left behind. */
  close(closedError: () => ConnectionError): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#stopWatch?.();
    this.#rejectConnected?.(closedError());
    try {
      this.client.destroy();
    } catch {
      // Not open (between first-connection attempts): nothing to destroy.
    }
  }
}

// RESP2 replies are the shapes the Backend interface promises (RESP3, the
// library's default, would turn hashes into objects).
function createSingle(options: Omit<RedisClientOptions, 'RESP'>) {
  return createClient({ ...options, RESP: 2, maintNotifications: 'disabled' });
}

function createClusterClient(options: Omit<RedisClusterOptions, 'RESP'>) {
  return createCluster({ ...options, RESP: 2 });
}

function createSentinelClient(options: Omit<RedisSentinelOptions, 'RESP'>) {
  return createSentinel({ ...options, RESP: 2 });
}
