// The relay between a client and a browser server works at the TCP level.
// First the dial: the client's WebSocket upgrade request is replayed to the
// worker with the client's own headers (User-Agent, x-playwright-*,
// Sec-WebSocket-Key), and the worker's answer is kept as it is, to go back to
// the client. Then the two sockets are piped (pipe.ts).
import type { IncomingMessage } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { DialError } from '../errors.ts';

export interface Dialed {
  socket: Socket;
  /** The worker's status code (101 when it accepted the upgrade). */
  status: number;
  /** The worker's response head and any bytes that followed it, to forward as they are. */
  response: Buffer;
}

/**
 * Headers not replayed: Host is the worker's, the grid's own token stays at the grid, and a
 * CDP lease (cdp/lease.ts) is the proxy's to ask for, never a client's.
 */
const DROPPED = new Set(['host', 'authorization', 'x-coord-cdp-lease']);

/** Opens a connection to a worker endpoint and replays the client's upgrade request on it. */
export function dialUpgrade(endpoint: string, req: Pick<IncomingMessage, 'rawHeaders'>, timeoutMs: number, extraHeaders: readonly string[] = []): Promise<Dialed> {
  const url = new URL(endpoint);
  const secure = url.protocol === 'wss:';
  const port = Number(url.port) || (secure ? 443 : 80);
  return new Promise((resolve, reject) => {
    const socket: Socket = secure
      ? tlsConnect({ host: url.hostname, port, servername: url.hostname })
      : tcpConnect({ host: url.hostname, port });
    const chunks: Buffer[] = [];
    const fail = (why: string, code?: string) => {
      socket.destroy();
      reject(new DialError(`${url.host}: ${why}`, code));
    };
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      fail(error.message, error.code);
    });
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        if (!DROPPED.has(req.rawHeaders[i]!.toLowerCase())) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
      lines.push(...extraHeaders);
      socket.write(lines.join('\r\n') + '\r\n\r\n');
    });
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      const all = Buffer.concat(chunks);
      if (all.indexOf('\r\n\r\n') === -1) {
        if (all.length > 64 * 1024) fail('response head larger than 64 KiB');
        return;
      }
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      socket.removeAllListeners('error');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(all.toString('latin1', 0, 16))?.[1] ?? 0);
      resolve({ socket, status, response: all });
    };
    socket.on('data', onData);
  });
}
