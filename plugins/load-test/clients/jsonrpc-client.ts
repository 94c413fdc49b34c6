// The scenario's JSON-RPC 2.0 client (user.jsonrpc), over the HTTP client:
// a call is one POST of {jsonrpc, id, method, params}, timed as the HTTP
// request is (send to last byte) and recorded as "jsonrpc METHOD" with the
// requests (in the total). A call fails — an error of its metric — on a
// network error or timeout, an HTTP status outside 2xx, a body that is no
// JSON-RPC response to it, or a JSON-RPC error object. Like an HTTP request,
// a call returns instead of throwing.
import type { HttpClient } from './http-client.ts';
import type { MetricsRecorder } from '../metrics/recorder.ts';

export interface JsonRpcCallOptions {
  /** Metric name (default "jsonrpc METHOD"). */
  metric?: string;
  /** Endpoint of this call: a URL, or a path against the base URL (default: params.jsonrpcUrl, else the base URL). */
  url?: string;
  headers?: Record<string, string>;
  /** Aborts the call after this many ms (an error "timeout"). */
  timeout?: number;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResponse<T = unknown> {
  ok: boolean;
  /** The result member, when the call succeeded. */
  result?: T;
  /** The JSON-RPC error object, when the server sent one. */
  rpcError?: JsonRpcError;
  /** Why it failed ('JSON-RPC -32601: Method not found', 'HTTP 500', 'ECONNREFUSED', 'timeout'), when it did. */
  error?: string;
  /** HTTP status (0 without a response). */
  status: number;
  /** Milliseconds, as recorded. */
  latency: number;
}

export class JsonRpcClient {
  private nextId = 1;

  constructor(
    private readonly http: HttpClient,
    private readonly recorder: MetricsRecorder,
    /** The default endpoint ('' : the base URL itself). */
    private readonly endpoint: string,
  ) {}

  async call<T = unknown>(method: string, params?: unknown[] | Record<string, unknown>, options: JsonRpcCallOptions = {}): Promise<JsonRpcResponse<T>> {
    const id = this.nextId++;
    const metric = options.metric ?? `jsonrpc ${method}`;
    const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
    const res = await this.http.send('POST', options.url ?? this.endpoint, { json: message, headers: options.headers, timeout: options.timeout, expect: [200, 201, 202, 203, 204, 205, 206] }, false);
    let out: JsonRpcResponse<T> = { ok: false, status: res.status, latency: res.latency, error: res.error };
    if (res.ok) out = judge<T>(res.body, id, res.status, res.latency);
    this.recorder.record(metric, res.latency, out.error, 'http', out.error === undefined ? undefined : () => `${out.error}\n${res.body}`);
    return out;
  }
}

function judge<T>(body: string, id: number, status: number, latency: number): JsonRpcResponse<T> {
  const fail = (error: string, rpcError?: JsonRpcError): JsonRpcResponse<T> => ({ ok: false, status, latency, error, rpcError });
  let reply: { jsonrpc?: unknown; id?: unknown; result?: T; error?: JsonRpcError };
  try {
    reply = JSON.parse(body) as typeof reply;
  } catch {
    return fail('not a JSON-RPC response: the body is not JSON');
  }
  if (typeof reply !== 'object' || reply === null || reply.jsonrpc !== '2.0') return fail('not a JSON-RPC response: no "jsonrpc": "2.0"');
  if (reply.error !== undefined) {
    const e = reply.error;
    const code = typeof e?.code === 'number' ? e.code : 'error';
    return fail(`JSON-RPC ${code}: ${String(e?.message ?? '').slice(0, 80)}`, e);
  }
  if (reply.id !== id) return fail("not a JSON-RPC response to this call: another id");
  if (!('result' in reply)) return fail('not a JSON-RPC response: neither result nor error');
  return { ok: true, status, latency, result: reply.result };
}
