// Relays a WebSocket upgrade (WebDriver BiDi) to the next hop without parsing
// frames: the upgrade request is rewritten (path, Host), then bytes flow both ways.
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';

export function relayUpgrade(req: IncomingMessage, client: Socket, head: Buffer, target: { host: string; port: number; path: string; headers?: Record<string, string> }): Promise<void> {
  return new Promise((resolve) => {
    const upstream = connect(target.port, target.host);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      client.destroy();
      upstream.destroy();
      resolve();
    };
    upstream.once('connect', () => {
      upstream.write(upgradeHead(req, target));
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    endTogether(client, upstream, finish);
  });
}

/** The upgrade request for the next hop: its path and Host, the client's headers less the grid's own credentials. */
export function upgradeHead(req: IncomingMessage, target: { host: string; port: number; path: string; headers?: Record<string, string> }): string {
  const lines = [`${req.method} ${target.path} HTTP/1.1`, `Host: ${target.host}:${target.port}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (/^(host|origin|authorization|x-coord-node-key)$/i.test(name)) continue;
    lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
  }
  for (const [name, value] of Object.entries(target.headers ?? {})) if (value) lines.push(`${name}: ${value}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

/** Either side closing or failing ends both (`finish`); a next hop that fails before answering gets the client a 502. */
export function endTogether(client: Socket, upstream: Socket, finish: () => void): void {
  upstream.on('error', () => {
    if (!client.destroyed && client.writable && upstream.bytesRead === 0) {
      client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    }
    finish();
  });
  client.on('error', finish);
  upstream.on('close', finish);
  client.on('close', finish);
}

/** Answers an upgrade request with an HTTP error and closes the socket. */
export function refuseUpgrade(socket: Socket, status: number, body: string): void {
  if (socket.destroyed) return;
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 500: 'Internal Server Error', 502: 'Bad Gateway' }[status] ?? 'Error';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
