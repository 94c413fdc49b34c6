// One request from a process of the grid to another (proxy → manager or
// node, manager → node, node → driver), and the headers a forwarded request keeps.
import type { IncomingHttpHeaders } from 'node:http';
import { Agent } from 'undici';
import { WebDriverError } from '../errors.ts';

/**
 * The grid's own hops (proxy → manager / node, node → driver), on undici's
 * dispatch interface: a pool of keep-alive connections per target, and no
 * stream objects per request (most of what a hop costs in CPU). No timeouts
 * unless a caller asks: a command may rightly take minutes (a page load, an
 * async script), and a POST /session waits out the queue.
 */
const hops = new Agent({ keepAliveTimeout: 4_000, headersTimeout: 0, bodyTimeout: 0, connections: null, pipelining: 1 });

export interface Hop {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** host:port as a Host header or URL has it: IPv6 addresses bracketed. */
export function hostPort(target: { host: string; port: number }): string {
  return `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
}

/** http://host:port. */
export function originOf(target: { host: string; port: number }): string {
  return `http://${hostPort(target)}`;
}

/** One request to another process of the grid, body buffered both ways. `signal` aborts it; `timeoutMs` bounds the wait for each part of the answer. */
export function hop(
  target: { host: string; port: number; origin?: string },
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer | undefined,
  signal?: AbortSignal,
  timeoutMs = 0,
): Promise<Hop> {
  return new Promise((resolve, reject) => {
    let status = 502;
    let answerHeaders: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let onAbort: (() => void) | undefined;
    const settled = () => {
      if (onAbort) signal!.removeEventListener('abort', onAbort);
    };
    hops.dispatch(
      {
        origin: target.origin ?? originOf(target),
        path,
        method: method as 'GET',
        headers: headers as Record<string, string | string[]>,
        body: body?.length ? body : undefined,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      {
        onRequestStart(controller) {
          if (!signal) return;
          if (signal.aborted) return controller.abort(signal.reason);
          onAbort = () => controller.abort(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
        },
        onResponseStart(_controller, statusCode, responseHeaders) {
          status = statusCode;
          answerHeaders = responseHeaders as IncomingHttpHeaders;
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          settled();
          resolve({ status, headers: answerHeaders, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        },
        onResponseError(_controller, error) {
          settled();
          const code = (error as { code?: string }).code;
          reject(code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' ? new WebDriverError(`no answer from ${target.host}:${target.port} within ${timeoutMs} ms`, { code: 'COORD_ERR_WEBDRIVER_HOP_TIMEOUT' }) : error);
        },
      },
    );
  });
}

/** Headers that describe one connection, not the request: never passed on (undici refuses most of them anyway). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'content-length', 'authorization', 'expect']);

/** Request headers worth passing on to the next hop (no hop-by-hop ones). */
export function forwardHeaders(headers: IncomingHttpHeaders, extra?: Record<string, string>): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const name in headers) {
    if (!HOP_BY_HOP.has(name)) out[name] = headers[name];
  }
  return extra ? Object.assign(out, extra) : out;
}
