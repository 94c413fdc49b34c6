// DevTools-protocol (CDP) sessions, for Puppeteer (`puppeteer.connect({
// browserWSEndpoint })`) and Playwright's `chromium.connectOverCDP()`. Each
// client gets a Chromium process of its own, with its own profile folder,
// killed when the client leaves. Why a process and not a context in a shared
// browser: a CDP client speaks to the whole browser — it can list and attach
// to every target (Target.getTargets, setDiscoverTargets, setAutoAttach) and
// read every context's cookies (Storage.getCookies) — so a shared browser
// would show each client the others' pages unless the protocol were rewritten
// message by message. After the first CDP client, one warm spare process is
// kept ready, so the next client does not wait for a launch (a worker that
// never sees a CDP client runs no extra browser).
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { GridError } from '../errors.ts';
import { systemChromium } from '../worker/browser.ts';
import { asksForPath } from '../worker/endpoint-secret.ts';
import { readHead } from '../worker/read-head.ts';
import { type CdpBrowser, disposeCdpBrowser, launchCdpBrowser, removeProfile, runningCdpBrowsers } from './chromium.ts';
import { LEASE_ANSWER, asksForLease } from './lease.ts';
import { killTree } from './process-tree.ts';

/**
 * The spare taken by a client is replaced this long after (or when that client leaves, if
 * sooner): a browser launching at once would compete for the CPU with the client's first
 * page, the moment its latency is felt.
 */
export const REFILL_DELAY_MS = 2000;

/**
 * A worker's CDP front: a TCP port where each WebSocket upgrade on its secret path gets a
 * browser process of its own. Any other path is answered 403 before a browser is started.
 */
export class CdpFront {
  private server?: Server;
  private spare?: Promise<CdpBrowser>;
  private refillTimer?: ReturnType<typeof setTimeout>;
  private readonly live = new Set<Socket>();
  /** Browsers being killed and their profiles removed; close() waits for them. */
  private readonly retiring = new Set<Promise<void>>();
  /** Profile folders this front made and has not yet seen removed; close() removes what is left. */
  private readonly profiles = new Set<string>();
  private closed = false;

  constructor(
    private readonly executablePath: string | undefined,
    private readonly extraArgs: readonly string[],
    /** The path clients must ask for (worker/endpoint-secret.ts): only those who read the worker's record know it. */
    private readonly path: string,
    private readonly refillDelayMs = REFILL_DELAY_MS,
    /** Told why a client got no browser (its launch failed): the client's 503 says it too. */
    private readonly onLaunchError: (err: Error) => void = () => {},
  ) {}

  /** Sessions running now. */
  get sessions(): number {
    return this.live.size;
  }

  /** Listens on host:port (0: any); returns the port bound. */
  async start(host: string, port: number): Promise<number> {
    const executable = this.executablePath ?? systemChromium();
    if (!executable) throw new GridError('CDP sessions need a Chromium binary: install Debian\'s chromium package or set browser-grid.executablePath', { code: 'COORD_ERR_BROWSER_GRID_NO_CHROMIUM' });
    this.server = createServer((socket) => void this.serve(socket, executable));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : port;
  }

  /** The warm spare, taken at once so no two clients share it; a fresh launch when there is none or it died. */
  private async take(executable: string): Promise<CdpBrowser> {
    const ready = this.spare;
    this.spare = undefined;
    const spare = await ready?.catch(() => undefined);
    if (spare && spare.process.exitCode === null && spare.process.signalCode === null) return spare;
    if (spare) this.retire(spare);
    return launchCdpBrowser(executable, this.extraArgs, this.profiles);
  }

  private retire(browser: CdpBrowser): void {
    const done = disposeCdpBrowser(browser, this.profiles).finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  private refill(executable: string): void {
    clearTimeout(this.refillTimer);
    this.refillTimer = undefined;
    if (this.closed || this.spare) return;
    this.spare = launchCdpBrowser(executable, this.extraArgs, this.profiles);
    this.spare.catch(() => {});
  }

  /** Reads the client's upgrade request, hands it a browser of its own, and pipes the two until either ends. */
  private async serve(client: Socket, executable: string): Promise<void> {
    this.live.add(client);
    client.on('error', () => client.destroy());
    let browser: CdpBrowser | undefined;
    client.once('close', () => {
      this.live.delete(client);
      if (browser) this.retire(browser);
      if (this.refillTimer) this.refill(executable);
    });
    const head = await readHead(client);
    if (!head || this.closed) return void client.destroy();
    if (!asksForPath(head, this.path)) {
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    let failure: Error | undefined;
    browser = await this.take(executable).catch((err: Error) => void (failure = err));
    if (!this.refillTimer) this.refillTimer = setTimeout(() => this.refill(executable), this.refillDelayMs);
    if (!browser) {
      const why = `no browser for this client: ${failure?.message ?? 'it could not be started'}`;
      this.onLaunchError(failure ?? new GridError(why, { code: 'COORD_ERR_BROWSER_GRID_CDP_LAUNCH' }));
      client.end(`HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(why)}\r\n\r\n${why}`);
      return;
    }
    if (client.destroyed) return this.retire(browser);
    if (asksForLease(head)) return this.lease(client, browser);
    const lines = head.toString('latin1').split('\r\n');
    lines[0] = lines[0]!.replace(/^GET \S+/, `GET ${browser.path}`);
    const request = lines.map((l) => (/^host:/i.test(l) ? `Host: ${browser!.address}` : l)).join('\r\n');
    const [host, port] = [browser.address.slice(0, browser.address.lastIndexOf(':')), Number(browser.address.slice(browser.address.lastIndexOf(':') + 1))];
    const upstream = tcpConnect({ host, port }, () => upstream.write(request));
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    // CDP is many small request/answer messages: Nagle's delay would hold each small write
    for (const socket of [client, upstream]) socket.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /**
   * A proxy on this host asked for the browser's address to connect its client straight to it
   * (one relay instead of two). The connection stays open as the lease: its close retires the
   * browser, as a relayed client's does, and the browser's exit closes it.
   */
  private lease(client: Socket, browser: CdpBrowser): void {
    const address = `ws://${browser.address}${browser.path}`;
    client.write(`HTTP/1.1 200 OK\r\n${LEASE_ANSWER}: ${address}\r\nContent-Length: 0\r\n\r\n`);
    browser.process.once('exit', () => client.destroy());
    client.resume(); // reading is how its close is heard
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.refillTimer);
    this.server?.close();
    for (const socket of this.live) socket.destroy(); // each one's 'close' retires its browser
    const spare = await this.spare?.catch(() => undefined);
    if (spare) this.retire(spare);
    await Promise.all(this.retiring);
    // What is still here: a browser launched for a client that left during the stop, or a
    // folder a dying helper process wrote into after it was removed. Its browser dies first.
    const stragglers = [...runningCdpBrowsers].filter(([child, profile]) => child.pid !== undefined && this.profiles.has(profile)).map(([child]) => child);
    await Promise.all(stragglers.map((child) => new Promise((resolve) => (child.once('exit', resolve), killTree(child.pid!)))));
    await Promise.all([...this.profiles].map((profile) => removeProfile(profile, this.profiles)));
  }
}
