// The worker role: runs browser servers and keeps each registered as playwright-distributed's layout
// documents. A server that reaches its lifetime limit (or is told to shut down)
// drains and is replaced by a fresh one under a new id, in this same process:
// recycling needs no container restart policy. The replacement starts when the
// drain begins, so a long last session does not take the slots out meanwhile.
import { randomUUID } from 'node:crypto';
import type { BrowserServer } from 'playwright-core';
import type { Role } from '../../../core/plugin.ts';
import type { Subscriber } from '../../../core/backend.ts';
import { launchBrowserServer, playwrightVersion } from '../browser.ts';
import { CdpFront } from '../cdp.ts';
import { portRange } from '../config.ts';
import { REDIS_CALL_MS, withDeadline } from '../deadline.ts';
import { workerRef, type BrowserType } from '../refs.ts';
import { PortPool } from '../ports.ts';
import { establishedTo } from '../sockets.ts';
import type { Ctx } from '../context.ts';

export function workerRole(ctx: Ctx): Role {
  const { config, logger } = ctx;
  const instances = new Set<WorkerInstance>();
  const loops: Promise<void>[] = [];
  let subscriber: Subscriber | undefined;
  let stopping = false;
  const ports = new PortPool(config.workerHost, portRange(config.workerPorts));

  /** Starts one browser server of a type and files it with the running ones. */
  async function launch(browserType: BrowserType): Promise<WorkerInstance> {
    const instance = new WorkerInstance(ctx, browserType, subscriber!, ports);
    instances.add(instance);
    void instance.finished.then(() => instances.delete(instance));
    try {
      await instance.start();
      return instance;
    } catch (error) {
      await instance.close('start failed');
      throw error;
    }
  }

  /** Replaces a browser server each time one goes away, until the role stops. */
  async function supervise(first: WorkerInstance): Promise<void> {
    let current = first;
    let backoff = 1000;
    while (!stopping) {
      const why = await current.leaving;
      while (!stopping) {
        try {
          current = await launch(first.browserType);
          logger.info('browser server replaced', { browserType: first.browserType, why, workerId: current.id });
          backoff = 1000;
          break;
        } catch (error) {
          logger.error('browser server failed to start', { browserType: first.browserType, error: (error as Error).message, retryInMs: backoff });
          await ctx.clock.sleep(backoff, ctx.signal).catch(() => {});
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
    }
  }

  return {
    async start() {
      // Redis came back (maybe empty): register again now, not at the next heartbeat
      ctx.backend.onState((state) => {
        if (state === 'ready') for (const instance of instances) void instance.beat();
      });
      subscriber = await ctx.backend.subscriber();
      subscriber.onMessage(({ channel }) => {
        for (const instance of instances) if (instance.commandChannel === channel) void instance.drain('shutdown command');
      });
      const types = config.browserTypes.flatMap((type) => Array.from({ length: config.workers }, () => type));
      const started = await Promise.allSettled(types.map(launch));
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) {
        stopping = true;
        await Promise.all([...instances].map((i) => i.close('start failed')));
        await subscriber.close();
        throw (failed as PromiseRejectedResult).reason;
      }
      for (const r of started) loops.push(supervise((r as PromiseFulfilledResult<WorkerInstance>).value));
      logger.info('workers ready', { count: instances.size, browserTypes: config.browserTypes });
    },
    async stop(reason) {
      stopping = true;
      await Promise.all([...instances].map((i) => i.drain(reason)));
      await Promise.all(loops);
      await subscriber?.close();
    },
  };
}

/** One browser server and its registration. */
class WorkerInstance {
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
  private cdp?: CdpFront;
  private cdpPort = 0;
  private cdpEndpoint = '';
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
    private readonly subscriber: Subscriber,
    private readonly ports: PortPool,
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
    const { config } = this.ctx;
    this.port = await this.ports.take();
    this.server = await launchBrowserServer({
      browserType: this.browserType,
      host: config.workerHost,
      port: this.port,
      executablePath: config.executablePath,
      args: config.launchArgs,
    });
    this.version = await playwrightVersion();
    const url = new URL(this.server.wsEndpoint());
    this.port = Number(url.port);
    if (config.advertiseHost) url.hostname = config.advertiseHost;
    this.endpoint = url.toString();
    if (config.cdp && this.browserType === 'chromium') {
      this.cdp = new CdpFront(config.executablePath, config.launchArgs);
      this.cdpPort = await this.cdp.start(config.workerHost, await this.ports.take());
      const cdpUrl = new URL(`ws://${config.workerHost}:${this.cdpPort}/`);
      if (config.advertiseHost) cdpUrl.hostname = config.advertiseHost;
      this.cdpEndpoint = cdpUrl.toString();
    }
    this.server.process().once('exit', () => {
      if (!this.closed) void this.remove().then(() => this.close('browser process exited'));
    });
    await this.subscriber.subscribe(this.commandChannel);
    await this.touch();
    this.heartbeat = setInterval(() => void this.beat(), config.heartbeatInterval * 1000);
    this.log.info('browser server registered', { endpoint: this.endpoint, ...(this.cdpEndpoint ? { cdpEndpoint: this.cdpEndpoint } : {}) });
  }

  /** The keys touchWorker and removeWorker take: the worker's record, counters and indexes. */
  private keySlots() {
    const { browserType, id: workerId } = this;
    return { worker: { browserType, workerId }, active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType }, versions: { browserType } };
  }

  /** Writes every field again, so a Redis that lost its data has the worker back within one heartbeat. */
  private async touch(): Promise<boolean> {
    const { config, scripts, clock } = this.ctx;
    const reply = (await scripts.run('touchWorker', {
      keys: this.keySlots(),
      args: {
        ref: this.ref,
        nowMs: clock.now(),
        staleMs: config.staleThreshold * 1000,
        maxConcurrent: config.maxConcurrentSessions,
        maxLifetime: config.maxLifetimeSessions,
        ttl: Math.ceil(config.redisKeyTtl),
        fields: [
          'id', this.id,
          'browserType', this.browserType,
          'wsEndpoint', this.endpoint,
          // playwright-distributed's proxy and monitor read `endpoint`
          'endpoint', this.endpoint,
          ...(this.cdpEndpoint ? ['cdpEndpoint', this.cdpEndpoint] : []),
          'status', this.status,
          'lastHeartbeat', Math.floor(clock.now() / 1000),
          'startedAt', this.startedAt,
          'version', this.version,
        ],
      },
    })) as [number, number];
    if (reply[1] === 1) await this.ctx.backend.send(['PUBLISH', this.ctx.channels.capacity({ browserType: this.browserType }), this.ref]);
    return reply[1] === 1;
  }

  async beat(): Promise<void> {
    if (this.beating || this.closed) return; // the last one still waits for Redis
    this.beating = true;
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
    return Math.max(Number(counted ?? 0), (establishedTo(this.port) ?? 0) + (this.cdp?.sessions ?? 0));
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
    await this.ctx.scripts
      .run('removeWorker', {
        keys: this.keySlots(),
        args: { ref: this.ref },
      })
      .catch((error) => this.log.warn('could not deregister', { error: (error as Error).message }));
  }

  async close(why: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    await this.subscriber.unsubscribe(this.commandChannel).catch(() => {});
    await this.server?.close().catch(() => {});
    await this.cdp?.close();
    this.ports.release(this.port);
    this.ports.release(this.cdpPort);
    this.leave(why);
    this.finish(why);
  }
}
