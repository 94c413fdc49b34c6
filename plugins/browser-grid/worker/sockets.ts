// A worker's own count of the sessions on its browser server: the TCP
// connections established to the server's port, read from the kernel
// (/proc/net/tcp, tcp6). Redis holds the grid's count, but a Redis restarted
// empty forgets it until the proxies restore it; a draining worker waits for
// both, so it never closes a browser under a live session.
import { readFileSync } from 'node:fs';

const ESTABLISHED = '01';

/** Connections established to a local port, or undefined where the kernel does not tell (not Linux). */
export function establishedTo(port: number): number | undefined {
  let found = false;
  let count = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    found = true;
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4 || cols[3] !== ESTABLISHED) continue;
      const local = cols[1]!;
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) count++;
    }
  }
  return found ? count : undefined;
}
