// One @redis/client connection (a client, or a cluster) as the node-redis
// adapter uses it. @redis/client gives up on a first connection that fails
// (and a cluster's connect() always does), so the first connection is retried
// here, on timers that close() clears; once it has been ready, the library's
// own reconnectStrategy takes over with the same pacing.
import { createClient, createCluster, type RedisClientOptions, type RedisClusterOptions } from '@redis/client';
import { ConnectionError, type BackendOptions } from '../core/backend.ts';
import { READY_TIMEOUT_MS, retryDelay } from './support/retry.ts';
import type { ServerUrl } from './support/server-url.ts';
import { tlsOptions } from './support/tls.ts';

export type SingleClient = ReturnType<typeof createSingle>;
export type ClusterClient = ReturnType<typeof createClusterClient>;

export interface ConnectionEvents {
  /** Any error the client emits (it is noted, never thrown). */
  error(error: unknown): void;
  /** The connection (or, on a cluster, a node's connection) is ready. */
  ready(): void;
  /** The connection was lost after being ready and is being re-established. */
  lost(): void;
}

export class NodeRedisConnection {
  readonly client: SingleClient | ClusterClient;
  readonly #connected: Promise<void>;
  #rejectConnected: ((error: Error) => void) | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #everReady = false;
  #closed = false;

  constructor(parsed: ServerUrl, options: BackendOptions, name: string | undefined, events: ConnectionEvents) {
    // Before the first success the library must not retry by itself (its
    // backoff timer could not be cancelled by close()); after it, it should.
    const reconnectStrategy = (retries: number) => (this.#everReady && !this.#closed ? retryDelay(retries - 1) : false);
    const tls = tlsOptions(parsed, options.tls);
    const socket = { connectTimeout: READY_TIMEOUT_MS, reconnectStrategy, ...(tls ? { tls: true as const, ...tls } : {}) };
    const auth = { username: parsed.username, password: parsed.password, name };
    this.client =
      parsed.kind === 'cluster'
        ? createClusterClient({
            rootNodes: parsed.hosts.map(({ host, port }) => ({ socket: { host, port } })),
            defaults: { ...auth, socket },
          })
        : createSingle({ ...auth, database: parsed.db, socket: { ...socket, ...parsed.hosts[0]! } });

    this.client.on('error', events.error);
    if (parsed.kind === 'cluster') {
      this.client.on('node-error', events.error);
      this.client.on('connect', () => events.ready());
      this.client.on('node-ready', () => this.#everReady && events.ready());
      this.client.on('node-reconnecting', () => this.#everReady && events.lost());
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
            events.error(error);
            if (!this.#closed) this.#retryTimer = setTimeout(() => attempt(n + 1), retryDelay(n));
          },
        );
      };
      attempt(0);
    });
    this.#connected.catch(() => undefined); // callers that never send must not see an unhandled rejection
  }

  /** The client once its first connection is up (commands queue in it while it reconnects later on). */
  async ready(): Promise<SingleClient | ClusterClient> {
    await this.#connected;
    return this.client;
  }

  /** Ends the connection now: pending commands are rejected, no timer is left behind. */
  close(closedError: () => ConnectionError): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retryTimer);
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
