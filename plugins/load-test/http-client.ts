// The scenario's HTTP client, on undici. Each request is timed from send to
// the last byte of the body and recorded under a metric name the scenario may
// set (default "METHOD /path"). A network error or an unexpected status counts
// as an error of that metric; the request returns instead of throwing, so a
// step decides what an error means to it.
import { Agent, type Dispatcher } from 'undici';
import type { MetricsRecorder } from './metrics-recorder.ts';

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

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
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
  baseUrl?: string;
  dispatcher: Dispatcher;
  /** The user's signal (and the step's timeout), read at each request. */
  signal(): AbortSignal | undefined;
  /** The intended start of the iteration in arrival-rate mode (performance.now() ms), taken by its first request. */
  takeIntendedStart(): number | undefined;
}

export function httpAgent(connections: number): Agent {
  return new Agent({ connections: connections > 0 ? connections : null, keepAliveTimeout: 10_000, pipelining: 1 });
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

  async request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const url = this.ctx.baseUrl ? new URL(path, this.ctx.baseUrl) : new URL(path);
    const metric = options.metric ?? `${method} ${url.pathname}`;
    const headers: Record<string, string> = { ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const signals = [this.ctx.signal(), options.timeout ? AbortSignal.timeout(options.timeout) : undefined].filter((s): s is AbortSignal => !!s);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const intended = this.ctx.takeIntendedStart();
    const sent = performance.now();
    const start = intended !== undefined ? Math.min(intended, sent) : sent;
    let status = 0;
    let text = '';
    let responseHeaders: HttpResponse['headers'] = {};
    let error: string | undefined;
    try {
      const res = await send(this.ctx.dispatcher, { origin: url.origin, path: url.pathname + url.search, method: method as Dispatcher.HttpMethod, headers, body }, signal);
      status = res.status;
      responseHeaders = res.headers;
      text = res.body;
      const expected = options.expect === undefined ? status < 400 : [options.expect].flat().includes(status);
      if (!expected) error = `HTTP ${status}`;
    } catch (err) {
      error = errorKind(err, signal);
    }
    const latency = performance.now() - start;
    this.ctx.recorder.record(metric, latency, error, 'http');
    return {
      status,
      headers: responseHeaders,
      body: text,
      latency,
      ok: error === undefined,
      error,
      json: <T>() => JSON.parse(text) as T,
    };
  }
}

/**
 * One request through undici's dispatch interface, the body collected as
 * text: no stream object per response (undici's request() makes one), which
 * is most of a client's cost when the server answers at once.
 */
function send(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal | undefined,
): Promise<{ status: number; headers: HttpResponse['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: HttpResponse['headers'] = {};
    const chunks: Buffer[] = [];
    let onAbort: (() => void) | undefined;
    const done = () => {
      if (onAbort) signal!.removeEventListener('abort', onAbort);
    };
    dispatcher.dispatch(options, {
      onRequestStart(controller) {
        if (!signal) return;
        if (signal.aborted) return controller.abort(signal.reason);
        onAbort = () => controller.abort(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        done();
        resolve({ status, headers, body: chunks.length === 1 ? chunks[0]!.toString() : Buffer.concat(chunks).toString() });
      },
      onResponseError(_controller, err) {
        done();
        reject(err);
      },
    });
  });
}

function errorKind(err: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    return reason?.name === 'TimeoutError' ? 'timeout' : 'aborted';
  }
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  return e.code && e.code !== 'UND_ERR' ? e.code : e.cause?.code ?? (e.message ?? String(err)).split('\n')[0]!.slice(0, 120);
}
