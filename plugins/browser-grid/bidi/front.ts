// WebDriver BiDi sessions, for Puppeteer (`puppeteer.connect({
// browserWSEndpoint, protocol: 'webDriverBiDi' })`) and other BiDi clients.
// Each client gets a Firefox process of its own, killed when it leaves: a
// Firefox serves one BiDi session at a time, and a BiDi session sees the whole
// browser (every context, every cookie), so a shared one would be neither
// possible nor private. No warm spare is kept: a Firefox takes ~400 MB.
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { asksForPath } from '../worker/endpoint-secret.ts';
import { readHead } from '../worker/read-head.ts';
import { type Firefox, disposeFirefox, launchFirefox, runningFirefoxes } from './firefox.ts';

/**
 * A worker's BiDi front: a TCP port where each WebSocket upgrade on its secret path gets a
 * Firefox of its own. Any other path is answered 403 before a Firefox is started.
 */
export class BidiFront {
  private server?: Server;
  private readonly live = new Set<Socket>();
  /** Firefoxes being killed and their folders removed; close() waits for them. */
  private readonly retiring = new Set<Promise<void>>();
  /** Folders this front made and has not yet seen removed; close() removes what is left. */
  private readonly folders = new Set<string>();
  private closed = false;

  constructor(
    /** The Firefox binary (roles/worker.ts found it). */
    private readonly executablePath: string,
    /** The path clients must ask for (worker/endpoint-secret.ts): only those who read the worker's record know it. */
    private readonly path: string,
    /** Told why a client got no Firefox (its launch failed): the client's 503 says it too. */
    private readonly onLaunchError: (err: Error) => void = () => {},
  ) {}

  /** Sessions running now. */
  get sessions(): number {
    return this.live.size;
  }

  /** Listens on host:port (0: any); returns the port bound. */
  async start(host: string, port: number): Promise<number> {
    this.server = createServer((socket) => void this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : port;
  }

  private retire(firefox: Firefox): void {
    const done = disposeFirefox(firefox, this.folders).finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  /** Reads the client's upgrade request, starts a Firefox for it, and pipes the two until either ends. */
  private async serve(client: Socket): Promise<void> {
    this.live.add(client);
    client.on('error', () => client.destroy());
    let firefox: Firefox | undefined;
    client.once('close', () => {
      this.live.delete(client);
      if (firefox) this.retire(firefox);
    });
    const head = await readHead(client);
    if (!head || this.closed) return void client.destroy();
    if (!asksForPath(head, this.path)) {
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    try {
      firefox = await launchFirefox(this.executablePath, this.folders);
    } catch (error) {
      this.onLaunchError(error as Error);
      const why = `no browser for this client: ${(error as Error).message}`;
      client.end(`HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(why)}\r\n\r\n${why}`);
      return;
    }
    if (client.destroyed) return this.retire(firefox);
    const port = Number(firefox.address.slice(firefox.address.lastIndexOf(':') + 1));
    // Firefox's BiDi server refuses (400) a Host other than its own address and any Origin header
    const lines = head.toString('latin1').split('\r\n').filter((l) => !/^origin:/i.test(l));
    lines[0] = lines[0]!.replace(/^GET \S+/, 'GET /session');
    const request = lines.map((l) => (/^host:/i.test(l) ? `Host: 127.0.0.1:${port}` : l)).join('\r\n');
    // until Firefox has started its first session (seconds after it listens) the upgrade waits: harmless
    const upstream = tcpConnect({ host: '127.0.0.1', port }, () => upstream.write(request));
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    for (const socket of [client, upstream]) socket.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.server?.close();
    for (const socket of this.live) socket.destroy(); // each one's 'close' retires its Firefox
    await Promise.all(this.retiring);
    // a Firefox launched for a client that left during the stop: it dies, then its folder goes
    const stragglers = [...runningFirefoxes].filter(([child, folder]) => child.pid !== undefined && this.folders.has(folder));
    await Promise.all(stragglers.map(([child, folder]) => disposeFirefox({ process: child, address: '', folder }, this.folders)));
  }
}
