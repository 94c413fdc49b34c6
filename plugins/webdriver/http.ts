// Small HTTP pieces the proxy, manager, node and API share: reading a body
// with a limit, answering JSON and W3C errors, listening, and one request to
// another process of the grid.
import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { errorBody, W3CError, type ErrorCode } from './w3c.ts';

/** Largest request body accepted (a New Session request or a command). */
export const BODY_LIMIT = 16 * 1024 * 1024;

/** A body that stops arriving for this long is incomplete (a truncated request). */
export const BODY_IDLE_MS = 10_000;

/** Reads the whole body; rejects with W3CError when it is too large, stalls, or the client goes away mid-body. */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT, idleMs = BODY_IDLE_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer = setTimeout(stalled, idleMs);
    function stalled() {
      reject(new W3CError('invalid argument', `the request body stopped after ${size} of ${req.headers['content-length'] ?? '?'} bytes (truncated request)`));
    }
    req.once('close', () => clearTimeout(timer));
    req.on('data', (chunk: Buffer) => {
      clearTimeout(timer);
      timer = setTimeout(stalled, idleMs);
      size += chunk.length;
      if (size > limit) {
        reject(new W3CError('invalid argument', `request body larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.on('aborted', () => reject(new W3CError('invalid argument', 'the request body ended before its announced length (truncated request)')));
    req.on('error', () => reject(new W3CError('invalid argument', 'the request body could not be read (truncated request)')));
  });
}

/** Parses a JSON body; an empty body is {}. */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return {};
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
      reject(new Error(error.code === 'EADDRINUSE' ? `${what}: port ${port} on ${host} is already in use` : `${what}: cannot listen on ${host}:${port}: ${error.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Closes a server and every connection it still has. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // close() on a server that already stopped listening would wait for a 'close' event that has passed
    if (server.listening) server.close(() => resolve());
    else resolve();
    server.closeAllConnections();
  });
}

/** One keep-alive agent per process for the grid's own hops (proxy → manager / node, node → driver). */
export const keepAlive = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });

export interface Hop {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request to another process of the grid, body buffered both ways. `signal` aborts it. */
export function hop(
  target: { host: string; port: number },
  method: string,
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer | undefined,
  signal?: AbortSignal,
  timeoutMs = 0,
): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const req = request({ host: target.host, port: target.port, method, path, headers, agent: keepAlive, signal, timeout: timeoutMs || undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${target.host}:${target.port} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Request headers worth passing on to the next hop (no hop-by-hop ones). */
export function forwardHeaders(headers: IncomingHttpHeaders, extra: Record<string, string> = {}): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'content-length', 'authorization'].includes(name)) continue;
    out[name] = value;
  }
  return { ...out, ...extra };
}
