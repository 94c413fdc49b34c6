// The connections a worker's users send their requests on.
//
// With `connections` 0 (the default), each user owns one connection per
// origin (http1-connection.ts: a socket and http-parser-js, cheaper per
// request than undici's Client), as k6's virtual users and autocannon's
// connections do: a user's request goes out on it directly. A shared Pool
// costs more per request (3-8% more of the client's CPU against
// bench/load.mjs's local server, in interleaved runs): when a user sends its
// next request, the connection that just answered is not yet free in the
// Pool's eyes (undici frees it an event-loop turn later), so the Pool scans
// its clients, queues the request and hands it over on that connection's
// 'drain' event. A user's
// requests made while its own connection is busy (concurrent requests in one
// step) go to the worker's Agent, on connections of their own, as before.
//
// With `connections` N > 0 the worker keeps at most N connections per origin,
// which its users share: undici's Pool for the base URL's origin (nearly every
// request goes there: it skips the Agent's lookup and its events), its Agent
// (N per origin) for any other origin; a request waits for whichever
// connection is free first.
//
// Every connection carries one request at a time (pipelining 1, as
// autocannon's default), so requests go out with `blocking: false` (see
// http-targets.ts): "blocking" only holds back further requests on the
// connection until the headers arrive, which pipelining 1 does anyway, and
// costs undici a second resume per request.
import type { Agent, Dispatcher, Pool } from 'undici';
import { lazyModule } from '../../../entries/plugin.ts';

// CommonJS, so required (lazyModule), not imported: Node's ESM import of a
// CommonJS package parses it for export names, which each user thread paid.
const undici = lazyModule<typeof import('undici')>('undici');
import { Http1Connection } from './http1-connection.ts';

const options = { keepAliveTimeout: 10_000, pipelining: 1 };
/** Origins a user keeps a connection of its own to: its requests to further ones go to the shared Agent. */
const MAX_OWN_ORIGINS = 16;

export class HttpDispatchers {
  /** For requests on no connection of a user's own, made at the first: loading undici cost a test ~130 ms of CPU at start (bench/load-startup.mjs). */
  private sharedAgent?: Agent;
  private readonly base: { origin: string; pool: Pool } | undefined;
  /** The users' own connections not closed yet. */
  private readonly clients = new Set<Http1Connection>();

  constructor(
    baseUrl: string | undefined,
    private readonly connections: number,
  ) {
    const origin = connections > 0 ? originOf(baseUrl) : undefined;
    this.base = origin ? { origin, pool: new (undici().Pool)(origin, { ...options, connections }) } : undefined;
  }

  /** Where requests to `origin` go that are not on a user's own connection. */
  shared(origin: string): Dispatcher {
    if (origin === this.base?.origin) return this.base.pool;
    return (this.sharedAgent ??= new (undici().Agent)({ ...options, connections: this.connections > 0 ? this.connections : null }));
  }

  /** The connections of one user: its own per origin when `connections` is 0, else none (the shared ones). */
  forUser(): UserConnections {
    return new UserConnections(this.connections === 0 ? this : undefined);
  }

  /** A new connection for one user, closed by close() unless released first. */
  ownClient(origin: string): Http1Connection {
    const client = new Http1Connection(origin);
    this.clients.add(client);
    return client;
  }

  /** Closes a user's connection once its requests are done. */
  release(client: Http1Connection): Promise<void> {
    return client.close().finally(() => this.clients.delete(client));
  }

  /** Closes every connection once its requests are done (a user's too: it may not have stopped). */
  async close(): Promise<void> {
    await Promise.all([this.sharedAgent?.close(), this.base?.pool.close(), ...[...this.clients].map((c) => this.release(c))]);
  }
}

/** One user's connections: per origin its own connection and whether a request of the user is on it. */
export class UserConnections {
  private readonly own = new Map<string, { client: Http1Connection; busy: boolean }>();

  constructor(private readonly dispatchers: HttpDispatchers | undefined) {}

  /**
   * The user's own connection to `origin`, now marked busy (the request frees it when done), or undefined
   * when the user has none (the worker's connections are shared, or it has its own to many origins already),
   * a request on it already (it goes to the shared ones) or the origin is no HTTP one (the shared Agent
   * gives the error undici gives).
   */
  take(origin: string): { client: Http1Connection; busy: boolean } | undefined {
    if (!this.dispatchers) return undefined;
    let own = this.own.get(origin);
    if (own === undefined) {
      if (!origin.startsWith('http') || this.own.size >= MAX_OWN_ORIGINS) return undefined;
      this.own.set(origin, (own = { client: this.dispatchers.ownClient(origin), busy: false }));
    }
    if (own.busy) return undefined;
    own.busy = true;
    return own;
  }

  /** The user has stopped: its connections close once their requests are done. */
  async close(): Promise<void> {
    const clients = [...this.own.values()].map((o) => o.client);
    this.own.clear();
    await Promise.all(clients.map((c) => this.dispatchers!.release(c)));
  }
}

function originOf(url: string | undefined): string | undefined {
  try {
    return url === undefined ? undefined : new URL(url).origin;
  } catch {
    return undefined; // each request says so (ERR_INVALID_URL)
  }
}
