// The ports browser servers bind: any free one, or one of the range
// `workerPorts` names, so firewalls and containers can be set up for them.
import { createServer } from 'node:net';
import { GridError } from '../errors.ts';

export class PortPool {
  private readonly taken = new Set<number>();

  constructor(
    private readonly host: string,
    private readonly range?: { first: number; last: number },
  ) {}

  /** A port for a new browser server (0 when no range is set: the system picks), held until released. */
  async take(): Promise<number> {
    if (!this.range) return 0;
    for (let port = this.range.first; port <= this.range.last; port++) {
      if (this.taken.has(port) || !(await isFree(this.host, port))) continue;
      this.taken.add(port);
      return port;
    }
    throw new GridError(`no free port left in workerPorts ${this.range.first}-${this.range.last} on ${this.host}`, { code: 'COORD_ERR_BROWSER_GRID_PORTS_EXHAUSTED' });
  }

  release(port: number): void {
    this.taken.delete(port);
  }
}

function isFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
