// Small HTTP pieces the proxy, manager, node and API share: reading a body
// with a limit, answering JSON and W3C errors, listening, and one request to
// another process of the grid.
import type { IncomingHttpHeaders, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server } from 'node:net';
import { Agent } from 'undici';
import { errorBody, type ErrorCode, W3CError, WebDriverError } from '../errors.ts';

/** Largest request body accepted (a New Session request or a command). */
export const BODY_LIMIT = 16 * 1024 * 1024;

/** A body that stops arriving for this long is incomplete (a truncated request). */
export const BODY_IDLE_MS = 10_000;

const EMPTY = Buffer.alloc(0);

/**
 * Reads the whole body; rejects with W3CError when it is too large (413: the
 * rest is read and dropped while the answer goes out), stalls (408), or the
 * client goes away mid-body (400). The caller answers and closes the connection.
 */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT, idleMs = BODY_IDLE_MS): Promise<Buffer> {
  // most commands (GET …/title) carry no body: no listeners, no timer
  if (req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] === undefined || req.headers['content-length'] === '0')) return Promise.resolve(EMPTY);
  const tooLarge = () => new W3CError('invalid argument', `the request body is larger than the limit of ${limit} bytes (proxy.bodyLimit)`, 413);
  if (Number(req.headers['content-length']) > limit) {
    req.resume(); // read and dropped, so the client sees the answer rather than a reset
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      reject(new W3CError('invalid argument', `the request body stopped after ${size} of ${req.headers['content-length'] ?? '?'} bytes for ${idleMs / 1000} s (truncated request)`, 408));
    }, idleMs);
    req.once('close', () => clearTimeout(timer));
    const onData = (chunk: Buffer) => {
      timer.refresh();
      size += chunk.length;
      if (size > limit) {
        clearTimeout(timer);
        req.off('data', onData);
        req.resume();
        chunks.length = 0;
        return reject(tooLarge());
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      clearTimeout(timer);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('aborted', () => reject(new W3CError('invalid argument', 'the request body ended before its announced length (truncated request)')));
    req.on('error', () => reject(new W3CError('invalid argument', 'the request body could not be read (truncated request)')));
  });
}

/** Deepest nesting a New Session body may have: real capabilities stay under ten; a deeper one would only exhaust the stack. */
export const MAX_JSON_DEPTH = 64;

/** How deep the arrays and objects of a JSON text nest (brackets inside strings do not count). */
export function jsonDepth(body: Buffer): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** Parses a JSON body; an empty body is {}. Nesting deeper than MAX_JSON_DEPTH is refused (invalid argument). */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return {};
  const depth = jsonDepth(body);
  if (depth > MAX_JSON_DEPTH) throw new W3CError('invalid argument', `the body nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new W3CError('invalid argument', `the body is not valid JSON: ${(err as Error).message}`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: string | object): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-cache' }).end(text);
}

export function sendError(res: ServerResponse, error: ErrorCode | W3CError, message = ''): void {
  const e = error instanceof W3CError ? error : new W3CError(error, message);
  sendJson(res, e.status, errorBody(e.error, e.message));
}

/** Listens on host:port (0: a free port); resolves with the port, rejects with one clear line. */
export function listen(server: Server, host: string, port: number, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new WebDriverError(`${what}: port ${port} on ${host} is already in use`, { code: 'COORD_ERR_WEBDRIVER_PORT_IN_USE' })
          : new WebDriverError(`${what}: cannot listen on ${host}:${port}: ${error.message}`, { code: 'COORD_ERR_WEBDRIVER_LISTEN' }),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Closes a server and every connection it still has. */
export function closeServer(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    // close() on a server that already stopped listening would wait for a 'close' event that has passed
    if (server.listening) server.close(() => resolve());
    else resolve();
    server.closeAllConnections();
  });
}

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
