// One browser server of a worker process and its registration: launched (with
// a CDP front when it serves CDP), registered and heartbeated as
// playwright-distributed's layout documents, drained when told to (or at its
// lifetime limit), deregistered and closed. roles/worker.ts runs and replaces them.
// A Firefox BiDi worker (browser-grid.bidi) is one too, with no Playwright
// server: its record has a bidiEndpoint and no wsEndpoint, and each of its
// clients gets a Firefox of its own (bidi/front.ts).
import { randomUUID } from 'node:crypto';
import type { BrowserServer } from 'playwright-core';
import { type Subscriber, withDeadline } from '../../../entries/plugin.ts';
import { BidiFront } from '../bidi/front.ts';
import { CdpFront } from '../cdp/front.ts';
import type { Ctx } from '../context.ts';
import { GridError } from '../errors.ts';
import { REDIS_CALL_MS } from '../redis-deadline.ts';
import { workerRef, type BrowserType } from '../refs.ts';
import { removeWorker, touchWorker } from '../scripts.ts';
import { isWildcard } from './advertise.ts';
import { launchBrowserServer } from './browser.ts';
import { secretPath, withoutSecret } from './endpoint-secret.ts';
import type { Playwright } from './playwright.ts';
import type { PortPool } from './ports.ts';
import { establishedTo } from './sockets.ts';

/** One browser server and its registration. */
export class WorkerInstance {
  readonly id = randomUUID();
  readonly ref: string;
  readonly commandChannel: string;
  /** Resolves with the reason the server went away. */
  readonly finished: Promise<string>;
  private finish!: (why: string) => void;
  /** Resolves when the server stops taking sessions (its drain begins) or goes away. */
  readonly leaving: Promise<string>;
  private leave!: (why: string) => void;
  private port = 0;
  private beating = false;
  /** The heartbeat last sent (remove() waits for it). */
  private lastBeat: Promise<void> = Promise.resolve();
  /** Deregistering: no heartbeat may write the record again. */
  private deregistering = false;
  private cdp?: CdpFront;
  private cdpPort = 0;
  private cdpEndpoint = '';
  private bidi?: BidiFront;
  private bidiEndpoint = '';
  private server?: BrowserServer;
  private endpoint = '';
  private version = '';
  private status: 'available' | 'draining' = 'available';
  private readonly startedAt = Math.floor(Date.now() / 1000);
  private heartbeat?: ReturnType<typeof setInterval>;
  private draining?: Promise<void>;
  private closed = false;
  private redisDown = false;

  constructor(
    private readonly ctx: Ctx,
    readonly browserType: BrowserType,
    readonly playwright: Playwright,
    /** Runs a CDP front (Chromium only, and only when browser-grid.cdp is on). */
    readonly servesCdp: boolean,
    private readonly subscriber: Subscriber,
    private readonly ports: PortPool,
    /** The host proxies dial (worker/advertise.ts); undefined: workerHost as it is. */
    private readonly advertiseHost: string | undefined,
    /** A Firefox BiDi worker: the Firefox binary its clients' browsers run (roles/worker.ts found it); undefined: a Playwright server. */
    readonly firefoxBinary?: string,
  ) {
    this.ref = workerRef(browserType, this.id);
    this.commandChannel = ctx.channels.shutdown({ browserType, workerId: this.id });
    this.finished = new Promise((resolve) => (this.finish = resolve));
    this.leaving = new Promise((resolve) => (this.leave = resolve));
  }

  private get log() {
    return this.ctx.logger.child({ workerId: this.id, browserType: this.browserType });
  }

  async start(): Promise<void> {
    if (this.firefoxBinary) await this.startBidi(this.firefoxBinary);
    else await this.startServer();
    await this.subscriber.subscribe(this.commandChannel);
    await this.touch();
    this.heartbeat = setInterval(() => void this.beat(), this.ctx.config.heartbeatInterval * 1000);
    // the paths are the secrets (Playwright's random one, the CDP and BiDi ports'): they stay in Redis
    const endpoints = Object.fromEntries(Object.entries({ endpoint: this.endpoint, cdpEndpoint: this.cdpEndpoint, bidiEndpoint: this.bidiEndpoint }).filter(([, url]) => url).map(([name, url]) => [name, withoutSecret(url)]));
    this.log.info('browser server registered', { ...endpoints, ...(this.version ? { version: this.version } : {}) });
  }

  /** The ws:// address of a front bound to `port` at `path`, as proxies dial it. */
  private frontEndpoint(port: number, path: string): string {
    const url = new URL(`ws://${this.ctx.config.workerHost}:${port}${path}`);
    if (this.advertiseHost) url.hostname = this.advertiseHost;
    return url.toString();
  }

  /** A Firefox BiDi worker: a BiDi port and no browser until a client comes. */
  private async startBidi(firefoxBinary: string): Promise<void> {
    const { config } = this.ctx;
    // only those who read this record (the grid's proxies) know the path the BiDi port serves
    const path = secretPath();
    this.bidi = new BidiFront(firefoxBinary, path, (err) => this.log.warn('a BiDi client got no Firefox: its launch failed', { error: err.message }));
    this.port = await this.bidi.start(config.workerHost, await this.ports.take());
    this.bidiEndpoint = this.frontEndpoint(this.port, path);
    if (isWildcard(new URL(this.bidiEndpoint).hostname)) {
      throw new GridError(`refusing to register ${withoutSecret(this.bidiEndpoint)}: a wildcard address; set browser-grid.advertiseHost to this host's name or address`, { code: 'COORD_ERR_BROWSER_GRID_WILDCARD_ADDRESS' });
    }
  }

  /** A Playwright browser server, with a CDP front when it serves CDP. */
  private async startServer(): Promise<void> {
    const { config } = this.ctx;
    this.port = await this.ports.take();
    this.server = await launchBrowserServer({
      browserType: this.browserType,
      host: config.workerHost,
      port: this.port,
      executablePath: config.executablePath,
      args: config.launchArgs,
      playwright: this.playwright.core,
    });
    this.version = this.playwright.version;
    const url = new URL(this.server.wsEndpoint());
    this.port = Number(url.port);
    if (this.advertiseHost) url.hostname = this.advertiseHost;
    // a proxy on another host would dial itself
    if (isWildcard(url.hostname)) {
      throw new GridError(`refusing to register ${url.protocol}//${url.host}: a wildcard address; set browser-grid.advertiseHost to this host's name or address`, { code: 'COORD_ERR_BROWSER_GRID_WILDCARD_ADDRESS' });
    }
    this.endpoint = url.toString();
    if (config.cdp && this.servesCdp && this.browserType === 'chromium') {
      // only those who read this record (the grid's proxies) know the path the CDP port serves
      const path = secretPath();
      this.cdp = new CdpFront(config.executablePath, config.launchArgs, path, undefined, (err) => this.log.warn('a CDP client got no browser: its launch failed', { error: err.message }));
      this.cdpPort = await this.cdp.start(config.workerHost, await this.ports.take());
      this.cdpEndpoint = this.frontEndpoint(this.cdpPort, path);
    }
    this.server.process().once('exit', () => {
      if (!this.closed) void this.remove().then(() => this.close('browser process exited'));
    });
  }

  /** Writes every field again, so a Redis that lost its data has the worker back within one heartbeat. */
  private async touch(): Promise<boolean> {
    const { config, clock } = this.ctx;
    const { free } = await touchWorker(this.ctx, this.ref, Math.ceil(config.redisKeyTtl), [
      'id', this.id,
      'browserType', this.browserType,
      // playwright-distributed's proxy and monitor read `endpoint`
      ...(this.endpoint ? ['wsEndpoint', this.endpoint, 'endpoint', this.endpoint] : []),
      ...(this.cdpEndpoint ? ['cdpEndpoint', this.cdpEndpoint] : []),
      ...(this.bidiEndpoint ? ['bidiEndpoint', this.bidiEndpoint] : []),
      'status', this.status,
      'lastHeartbeat', Math.floor(clock.now() / 1000),
      'startedAt', this.startedAt,
      // a BiDi worker speaks no Playwright version
      ...(this.version ? ['version', this.version] : []),
    ]);
    if (free) await this.ctx.backend.send(['PUBLISH', this.ctx.channels.capacity({ browserType: this.browserType }), this.ref]);
    return free;
  }

  beat(): Promise<void> {
    if (this.beating || this.closed || this.deregistering) return Promise.resolve(); // the last one still waits for Redis
    this.beating = true;
    this.lastBeat = this.beatOnce();
    return this.lastBeat;
  }

  private async beatOnce(): Promise<void> {
    try {
      await this.touch();
      const command = await this.ctx.backend.send(['GET', this.ctx.keys.shutdownCommand({ browserType: this.browserType, workerId: this.id })]);
      if (this.redisDown) this.log.info('heartbeat restored');
      this.redisDown = false;
      if (command === 'shutdown') void this.drain('shutdown command');
    } catch (error) {
      if (!this.redisDown) this.log.warn('heartbeat failed; retrying', { error: (error as Error).message });
      this.redisDown = true;
    } finally {
      this.beating = false;
    }
  }

  /** Sessions open on this server: the grid's count and the kernel's, whichever is higher (either may lag). */
  private async openSessions(): Promise<number> {
    const counted = await withDeadline(this.ctx.backend.send(['HGET', this.ctx.keys.activeConnections(), this.ref]), REDIS_CALL_MS).catch(() => null);
    const own = this.bidi ? this.bidi.sessions : (establishedTo(this.port) ?? 0) + (this.cdp?.sessions ?? 0);
    return Math.max(Number(counted ?? 0), own);
  }

  /** Stops taking sessions, waits for the open ones (up to drainTimeout), deregisters, closes the browser. */
  drain(reason: string): Promise<void> {
    this.draining ??= (async () => {
      const { config, clock } = this.ctx;
      this.log.info('draining', { reason });
      this.status = 'draining';
      this.leave(reason);
      await withDeadline(this.touch(), REDIS_CALL_MS).catch(() => {});
      const deadline = clock.now() + config.drainTimeout * 1000;
      while (clock.now() < deadline && (await this.openSessions()) > 0) await clock.sleep(250);
      await this.remove();
      await this.close(reason);
    })();
    return this.draining;
  }

  private async remove(): Promise<void> {
    // no heartbeat after this, and none in flight: a late one would write the record back (the grid's keys outliving it)
    this.deregistering = true;
    clearInterval(this.heartbeat);
    await withDeadline(this.lastBeat, REDIS_CALL_MS).catch(() => {});
    // bounded: with Redis gone the adapters hold the call until it returns, and the reaper removes the worker then
    await withDeadline(removeWorker(this.ctx, this.ref), REDIS_CALL_MS).catch((error) => this.log.warn('could not deregister', { error: (error as Error).message }));
  }

  async close(why: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    await withDeadline(this.subscriber.unsubscribe(this.commandChannel), REDIS_CALL_MS).catch(() => {});
    await this.server?.close().catch(() => {});
    await this.cdp?.close();
    await this.bidi?.close();
    this.ports.release(this.port);
    this.ports.release(this.cdpPort);
    this.leave(why);
    this.finish(why);
  }
}
