// The proxy's limits on what a client may hold before it is a session: a
// request head must be whole within HEAD_TIMEOUT_MS (as the webdriver proxy
// does: slowloris clients are answered 408), a head too large is answered 431
// (read to its end first, so the client sees the answer and not a reset),
// and an upgrade that is not a version-13 WebSocket handshake is answered as
// RFC 6455 §4.2.2 says. A relayed client has as long again to say its first
// message (Playwright and Puppeteer speak at once).
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** A request head must be whole this long after its connection opened (or its last request ended). */
export const HEAD_TIMEOUT_MS = 10_000;
/** How often node:http looks for heads past their time: a slow one is closed at most this much late. */
export const CHECK_EVERY_MS = 1000;
/** A relayed client that sends nothing this long after its 101 is disconnected and its session given back. */
export const FIRST_MESSAGE_MS = HEAD_TIMEOUT_MS;
/** Bytes of a refused request still read (and thrown away) before the connection is cut, so the answer is not lost to a reset. */
const DRAIN_BYTES = 4 * 1024 * 1024;
const DRAIN_MS = 2000;

/** Server options for node:http's createServer. */
export const serverLimits = { headersTimeout: HEAD_TIMEOUT_MS, requestTimeout: 0, connectionsCheckingInterval: CHECK_EVERY_MS };

/** Answers requests node:http could not take (too large, too slow, malformed) with their status, then closes. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const code = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[code];
    if (!socket.writable) return void socket.destroy();
    // node:http's parser has given up on this connection: what comes next is only read away
    socket.removeAllListeners('data');
    socket.end(`HTTP/1.1 ${code} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    // a client still sending its head would get a reset (and lose the answer) if the
    // socket were closed with bytes unread: read on, briefly and up to a bound
    let read = 0;
    const cut = setTimeout(() => socket.destroy(), DRAIN_MS);
    socket.on('data', (chunk: Buffer) => (read += chunk.length) > DRAIN_BYTES && socket.destroy());
    socket.once('close', () => clearTimeout(cut));
    socket.once('end', () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.resume();
  });
}

/** Why an upgrade request is not a WebSocket handshake this proxy can relay (RFC 6455 §4.2.1), or undefined when it is one. */
export function handshakeProblem(req: IncomingMessage): { code: 400 | 426; message: string } | undefined {
  if (req.headers.upgrade?.toLowerCase() !== 'websocket') return { code: 400, message: 'only WebSocket upgrades are served (Upgrade: websocket)' };
  if (req.headers['sec-websocket-version'] !== '13') return { code: 426, message: 'unsupported Sec-WebSocket-Version; this grid speaks 13' };
  const key = req.headers['sec-websocket-key'] ?? '';
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) return { code: 400, message: 'missing or malformed Sec-WebSocket-Key' };
  return undefined;
}
