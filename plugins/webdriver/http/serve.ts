// The server side the proxy, manager, node, API and storage share: reading a
// body with a limit, answering JSON and W3C errors, listening, closing. (A
// request from one process of the grid to another: hop.ts.)
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server } from 'node:net';
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
          ? new WebDriverError(`${what}: port ${port} on ${host} is already in use`, { code: 'COORD_ERR_WEBDRIVER_PORT_IN_USE', cause: error })
          : new WebDriverError(`${what}: cannot listen on ${host}:${port}: ${error.message}`, { code: 'COORD_ERR_WEBDRIVER_LISTEN', cause: error }),
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
