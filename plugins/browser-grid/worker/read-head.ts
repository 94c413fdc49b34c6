// The upgrade request head a client sends to a worker's CDP or BiDi port, read
// before a browser is started for it: its path is checked against the port's
// secret, and the rest of the head goes to the browser.
import type { Socket } from 'node:net';

/** A client whose upgrade request head is not whole this long after it connected is closed. */
export const HEAD_TIMEOUT_MS = 10_000;

/** The request head (through the blank line; anything after it stays unread), or undefined if the client left or was too slow. */
export function readHead(socket: Socket): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HEAD_TIMEOUT_MS);
    socket.once('close', () => clearTimeout(timer));
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) {
        if (data.length > 64 * 1024) (socket.destroy(), resolve(undefined));
        return;
      }
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      if (end + 4 < data.length) socket.unshift(data.subarray(end + 4));
      resolve(data.subarray(0, end + 4));
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(undefined));
  });
}
