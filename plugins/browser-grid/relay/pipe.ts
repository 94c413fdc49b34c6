// The relay's second half: once the worker accepted the upgrade, the client's
// and the worker's sockets are piped both ways. No payload is parsed or
// buffered, so the proxy adds almost nothing per message.
import type { Socket } from 'node:net';
import { FrameBoundaries, keepalive } from './keepalive.ts';

/**
 * Relays two upgraded sockets both ways; resolves once both are closed.
 * Client→worker bytes are piped as they are; worker→client bytes too, with
 * only their frame headers read so a keepalive ping can go in between frames.
 * `onFirstClientBytes` runs once, when the client sends its first bytes after the upgrade.
 */
export function pipeBoth(client: Socket, worker: Socket, clientHead: Buffer, keepaliveMs: number, onFirstClientBytes?: () => void): Promise<void> {
  for (const s of [client, worker]) {
    s.setNoDelay(true);
    s.setKeepAlive(true, 15_000);
  }
  let spoke = false;
  const heard = () => {
    if (spoke) return;
    spoke = true;
    onFirstClientBytes?.();
  };
  if (clientHead.length) {
    worker.write(clientHead);
    heard();
  }
  client.pipe(worker);
  const boundaries = new FrameBoundaries();
  const alive = keepaliveMs > 0 ? keepalive({ write: (b) => client.write(b), end: () => client.destroy() }, boundaries, keepaliveMs) : undefined;
  client.on('data', () => {
    heard();
    alive?.heardFromClient();
  });
  worker.on('data', (chunk: Buffer) => {
    boundaries.feed(chunk);
    if (!client.write(chunk)) worker.pause();
  });
  client.on('drain', () => worker.resume());
  worker.resume();
  return new Promise((resolve) => {
    let open = 2;
    const closed = () => {
      alive?.stop();
      client.destroy();
      worker.destroy();
      if (--open === 0) resolve();
    };
    client.once('close', closed);
    worker.once('close', closed);
    client.on('error', () => client.destroy());
    worker.on('error', () => worker.destroy());
  });
}
