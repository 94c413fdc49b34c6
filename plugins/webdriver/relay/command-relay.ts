// The command relay: the socket the proxy (and each node) listens on. It
// reads HTTP/1.1 framing itself so that a command for a session whose driver
// (or node) it can reach goes there as bytes, with no HTTP server or client
// objects per request: on a small VM a bare node:http proxy adds ~1.2 ms to a
// command, bytes relayed ~0.4 ms (bench/webdriver.mjs). Everything else — new
// sessions, /status, unknown sessions, errors, BiDi upgrades, whatever the
// relay does not fully read — goes unchanged to the node:http server behind
// it over an in-memory connection, one per client connection
// (client-connection.ts). Requests on a connection are taken one at a time,
// in order, so answers stay in order whichever way each went. Slow request
// heads are capped per client (slow-heads.ts).
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { trustedProxies, type TrustedProxies } from '../http/client-address.ts';
import { ClientConnection } from './client-connection.ts';
import type { RequestHead } from './http-frames.ts';
import { SlowHeads } from './slow-heads.ts';

/** Where the relay sends a request itself. */
export interface Straight {
  host: string;
  port: number;
  /** The request target upstream (a driver's own session id in place of the grid's). */
  path: string;
  /** Header lines added to the request upstream, each ending in CRLF (a node's key). */
  headers?: string;
  /** The client got its answer (status, body as sent, request body size). */
  answered(status: number, body: Buffer, bytesIn: number): void;
}

/** A request the relay may send straight, or undefined: node:http takes it. Called once the whole request is in. */
export type Router = (head: RequestHead) => Straight | undefined;

/** A kept-alive client connection with nothing asked for this long is closed (node:http's keepAliveTimeout did this before). */
export const CLIENT_IDLE_MS = 60_000;

/** A request head not whole this long after a connection opened (or after its first byte) is answered 408 (node:http's headersTimeout did this before). */
export const HEAD_TIMEOUT_MS = 10_000;

/** A request head still not whole this long after it was awaited is slow: counted against its client's cap. */
export const SLOW_HEAD_MS = 1_000;

export interface CommandRelayLimits {
  /** A kept-alive connection with nothing asked for this long is closed. */
  idleMs?: number;
  /** A request head must be whole this long after the connection opened or its first byte came: else 408 and closed. */
  headTimeoutMs?: number;
  /**
   * Slow request heads (still incomplete after slowMs) one client may have at once; one more is answered 429 and
   * closed (0: no cap). A client that sends its request promptly is never counted, however many connections it has.
   */
  perClient?: number;
  /** When a head counts as slow (default SLOW_HEAD_MS). */
  slowMs?: number;
  /** Proxies whose X-Forwarded-For names the client (a slow head from one is counted against that client). */
  trusted?: TrustedProxies;
}

export interface CommandRelay {
  server: Server;
  /** Ends every client connection (the server stops accepting with server.close()). */
  closeAll(): void;
}

export function commandRelay(http: HttpServer, route: Router, limits: CommandRelayLimits = {}): CommandRelay {
  const { idleMs = CLIENT_IDLE_MS, headTimeoutMs = HEAD_TIMEOUT_MS, perClient = 0, slowMs = SLOW_HEAD_MS, trusted = trustedProxies([]) } = limits;
  const open = new Set<Socket>();
  const slow = new SlowHeads(perClient, trusted);
  const server = createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    new ClientConnection(client, http, route, idleMs, headTimeoutMs, perClient > 0 ? slowMs : 0, slow);
  });
  return {
    server,
    closeAll: () => {
      for (const client of open) client.destroy();
    },
  };
}
