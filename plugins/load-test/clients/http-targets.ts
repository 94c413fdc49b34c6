// Paths a scenario requests, resolved against the base URL once: a load test
// asks for the same few paths over and over, and `new URL` per request was a
// twentieth of a request's CPU. Unique paths (ids in the query) are resolved
// each time as before; the oldest entry makes room past MAX_TARGETS.
import type { Dispatcher } from 'undici';
import type { HttpDispatchers } from './http-connections.ts';
import type { Http1Request } from './http1-connection.ts';

/** What a request is to undici's dispatchers and to a user's own connection (http1-connection.ts) alike. */
export type RequestSpec = Dispatcher.DispatchOptions & Http1Request;

const MAX_TARGETS = 1000;

export class Target {
  /** Dispatch options of a request with no headers and no body, per method (undici does not change them). */
  private readonly plain = new Map<string, RequestSpec>();
  private readonly metrics = new Map<string, string>();

  constructor(
    readonly origin: string,
    /** Path and query, as sent. */
    readonly path: string,
    readonly pathname: string,
    private readonly dispatchers: HttpDispatchers,
  ) {}

  /** The worker's shared connections to the origin: asked for only by a request on no connection of a user's own. */
  get dispatcher(): Dispatcher {
    return this.dispatchers.shared(this.origin);
  }

  plainOptions(method: string): RequestSpec {
    let options = this.plain.get(method);
    if (!options) this.plain.set(method, (options = { origin: this.origin, path: this.path, method: method as Dispatcher.HttpMethod, blocking: false }));
    return options;
  }

  /** The default metric name: "METHOD /path" without the query. */
  metric(method: string): string {
    let name = this.metrics.get(method);
    if (name === undefined) this.metrics.set(method, (name = `${method} ${this.pathname}`));
    return name;
  }
}

export class Targets {
  private readonly cache = new Map<string, Target>();

  constructor(
    private readonly baseUrl: string | undefined,
    private readonly dispatchers: HttpDispatchers,
  ) {}

  /** Throws a TypeError (ERR_INVALID_URL) for a path that is no URL, as `new URL` does. */
  resolve(path: string): Target {
    let target = this.cache.get(path);
    if (target === undefined) {
      const url = this.baseUrl ? new URL(path, this.baseUrl) : new URL(path);
      target = new Target(url.origin, url.pathname + url.search, url.pathname, this.dispatchers);
      if (this.cache.size >= MAX_TARGETS) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(path, target);
    }
    return target;
  }
}
