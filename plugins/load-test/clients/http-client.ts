// The scenario's HTTP client. Each request is timed from send to
// the last byte of the body and recorded under a metric name the scenario may
// set (default "METHOD /path"). A network error or an unexpected status counts
// as an error of that metric; the request returns instead of throwing, so a
// step decides what an error means to it.
//
// This is a load generator's hot path: on a fast server a worker's requests
// per second are its CPU over what one request costs here. So a request is
// one handler object on undici's dispatch interface, which the user's own
// connection (http1-connection.ts) speaks too (no stream per response,
// no closures, one Promise: the one returned), its path resolved once per
// distinct path (http-targets.ts), its abort watched by its user's scope
// (request-scope.ts) rather than by a listener of its own, the response
// headers parsed only when a step reads them, and it goes out on the user's
// own connection when it has one (http-connections.ts).
import type { Dispatcher } from 'undici';
import type { UserConnections } from './http-connections.ts';
import type { RequestSpec, Target, Targets } from './http-targets.ts';
import type { MetricsRecorder } from '../metrics/recorder.ts';
import { ScopedRequest, type RequestScope } from './request-scope.ts';
import { lazyModule } from '../../../entries/plugin.ts';

// CommonJS, so required (lazyModule), not imported: Node's ESM import of a
// CommonJS package parses it for export names, which each user thread paid.
const undici = lazyModule<typeof import('undici')>('undici');

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A string or bytes sent as is. */
  body?: string | Uint8Array;
  /** Sent as JSON (sets content-type). */
  json?: unknown;
  /** Metric name (default "METHOD /path" without the query). */
  metric?: string;
  /** Statuses that count as success (default: below 400). */
  expect?: number | number[];
  /** Aborts the request after this many ms (an error "timeout"). */
  timeout?: number;
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  body: string;
  /** Milliseconds, as recorded. */
  latency: number;
  ok: boolean;
  /** Why it failed ('HTTP 500', 'ECONNREFUSED', 'timeout'), when it did. */
  error?: string;
  json<T = unknown>(): T;
}

export interface HttpClientContext {
  recorder: MetricsRecorder;
  /** Paths resolved against the scenario's base URL, each with the worker's shared dispatcher for its origin. */
  targets: Targets;
  /** The user's own connections. */
  connections: UserConnections;
  /** The user's requests in flight under its signal (and its step's timeout), read at each request. */
  scope(): RequestScope;
  /** The intended start of the iteration in arrival-rate mode (performance.now() ms), taken by its first request. */
  takeIntendedStart(): number | undefined;
}

export class HttpClient {
  constructor(private readonly ctx: HttpClientContext) {}

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }
  post(path: string, options?: RequestOptions) {
    return this.request('POST', path, options);
  }
  put(path: string, options?: RequestOptions) {
    return this.request('PUT', path, options);
  }
  patch(path: string, options?: RequestOptions) {
    return this.request('PATCH', path, options);
  }
  delete(path: string, options?: RequestOptions) {
    return this.request('DELETE', path, options);
  }

  request(method: string, path: string, options?: RequestOptions): Promise<HttpResponse> {
    return this.send(method, path, options, true);
  }

  /** A request the caller records itself (`recorded` false: the JSON-RPC client, which also judges the body). */
  send(method: string, path: string, options: RequestOptions | undefined, recorded: boolean): Promise<HttpResponse> {
    return new Promise((resolve) => {
      const { ctx } = this;
      const target = ctx.targets.resolve(path);
      const dispatch = dispatchOptions(target, method, options); // may throw (a body JSON cannot show): nothing started yet
      const intended = ctx.takeIntendedStart();
      const own = ctx.connections.take(target.origin);
      const sent = performance.now();
      const exchange = new Exchange(
        ctx.recorder,
        ctx.scope(),
        recorded ? options?.metric ?? target.metric(method) : undefined,
        intended !== undefined && intended < sent ? intended : sent,
        options?.expect,
        own,
        resolve,
      );
      if (options?.timeout) exchange.timeout(options.timeout);
      if (own) own.client.dispatch(dispatch, exchange);
      else target.dispatcher.dispatch(dispatch, exchange);
    });
  }
}

function dispatchOptions(target: Target, method: string, options: RequestOptions | undefined): RequestSpec {
  if (options === undefined || (options.headers === undefined && options.body === undefined && options.json === undefined)) {
    return target.plainOptions(method);
  }
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  return { origin: target.origin, path: target.path, method: method as Dispatcher.HttpMethod, headers, body, blocking: false };
}

/**
 * One request, as undici's handler. It uses the handler methods undici 7's
 * Client calls itself (onConnect … onComplete; its types mark them deprecated):
 * the newer ones (onRequestStart …) go through a wrapper that makes a
 * controller per request and parses every response's headers and trailers
 * into objects.
 */
class Exchange extends ScopedRequest implements Dispatcher.DispatchHandler {
  private status = 0;
  private rawHeaders: Buffer[] | string[] | null = null;
  private first: Buffer | undefined;
  private rest: Buffer[] | undefined;
  private abortRequest: ((err: Error) => void) | undefined;
  /** Why it was cancelled ('timeout', 'aborted'), and the reason handed to undici. */
  private cancelled: { kind: string; reason: Error } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private finished = false;

  constructor(
    private readonly recorder: MetricsRecorder,
    private readonly scope: RequestScope,
    /** Undefined: not recorded here (the caller records it). */
    private readonly metric: string | undefined,
    private readonly start: number,
    private readonly expect: number | number[] | undefined,
    /** The user's own connection it went out on: free again once it is done. */
    private readonly own: { busy: boolean } | undefined,
    private readonly resolve: (response: HttpResponse) => void,
  ) {
    super();
    scope.add(this);
  }

  timeout(ms: number): void {
    this.timer = setTimeout(() => this.cancel(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
    this.timer.unref();
  }

  override cancel(reason: unknown): void {
    if (this.finished || this.cancelled) return;
    const name = (reason as { name?: string } | undefined)?.name;
    this.cancelled = { kind: name === 'TimeoutError' ? 'timeout' : 'aborted', reason: reason as Error };
    // Before it has a connection, undici aborts it when it gets one (onConnect).
    this.abortRequest?.(this.cancelled.reason);
  }

  onConnect(abort: (err?: Error) => void): void {
    if (!this.cancelled && this.scope.aborted) this.cancel(this.scope.signal.reason);
    if (this.cancelled) return abort(this.cancelled.reason);
    this.abortRequest = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[]): boolean {
    // A 1xx (e.g. 103 Early Hints) comes first; the final status replaces it.
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.first === undefined) this.first = chunk;
    else (this.rest ??= [this.first]).push(chunk);
    return true;
  }

  onComplete(): void {
    this.finish(undefined);
  }

  onError(err: Error): void {
    this.finish(err);
  }

  private finish(err: Error | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (this.own) this.own.busy = false;
    this.scope.delete(this);
    if (this.timer) clearTimeout(this.timer);
    const latency = performance.now() - this.start;
    let response: Response;
    let detail: (() => string) | undefined;
    if (err) {
      response = new Response(0, null, undefined, latency, this.cancelled?.kind ?? errorKind(err));
      detail = () => failureText(err);
    } else {
      const { status, expect } = this;
      const expected = expect === undefined ? status < 400 : Array.isArray(expect) ? expect.includes(status) : status === expect;
      const body = this.rest ? Buffer.concat(this.rest) : this.first;
      response = new Response(status, this.rawHeaders, body, latency, expected ? undefined : `HTTP ${status}`);
      if (!expected) detail = () => `HTTP ${status}\n${(response as Response).body}`;
    }
    this.resolve(response); // first: a throw from record() ends in undici, which hands it to onError: too late to matter
    if (this.metric !== undefined) this.recorder.record(this.metric, latency, response.error, 'http', detail);
  }
}

/** A response whose headers and body are decoded when first read: most steps never look at them. */
class Response implements HttpResponse {
  readonly ok: boolean;
  private parsedHeaders: ResponseHeaders | undefined;
  private text: string | undefined;

  constructor(
    readonly status: number,
    private rawHeaders: Buffer[] | string[] | null,
    private bytes: Buffer | undefined,
    readonly latency: number,
    readonly error: string | undefined,
  ) {
    this.ok = error === undefined;
  }

  get headers(): ResponseHeaders {
    if (this.parsedHeaders === undefined) {
      this.parsedHeaders = this.rawHeaders ? (undici().util.parseHeaders(this.rawHeaders) as ResponseHeaders) : {};
      this.rawHeaders = null;
    }
    return this.parsedHeaders;
  }

  get body(): string {
    if (this.text === undefined) {
      this.text = this.bytes ? this.bytes.toString() : '';
      this.bytes = undefined;
    }
    return this.text;
  }

  json<T = unknown>(): T {
    return JSON.parse(this.body) as T;
  }

  /** What JSON.stringify shows: the fields, headers and body included. */
  toJSON() {
    const { status, headers, body, latency, ok, error } = this;
    return { status, headers, body, latency, ok, error };
  }

  /** What console.log shows (Node and Deno): the same. */
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toJSON();
  }
}

function errorKind(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  return e.code && e.code !== 'UND_ERR' ? e.code : e.cause?.code ?? (e.message ?? String(err)).split('\n')[0]!.slice(0, 120);
}

/** A network error's whole message, with its cause's (the failures view's text). */
function failureText(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== err.message ? `${err.message}\n${cause.message}` : err.message;
}
