// The worker role: runs browser servers and keeps each registered as playwright-distributed's layout
// documents. A server that reaches its lifetime limit (or is told to shut down)
// drains and is replaced by a fresh one under a new id, in this same process:
// recycling needs no container restart policy. The replacement starts when the
// drain begins, so a long last session does not take the slots out meanwhile.
// With playwrightVersions, it runs servers of each listed Playwright version;
// with versionsOnDemand, it starts servers of a version a waiting client needs;
// with bidi, it runs Firefox BiDi workers too (each client a Firefox of its own).
import { randomUUID } from 'node:crypto';
import type { Role, Subscriber } from '../../../entries/plugin.ts';
import { onDemandAllows, portRange } from '../config.ts';
import type { Ctx } from '../context.ts';
import { redisDeadline } from '../redis-deadline.ts';
import { GridError } from '../errors.ts';
import { majorMinor, type BrowserType } from '../refs.ts';
import { advertisedHost } from '../worker/advertise.ts';
import { firefoxBinary } from '../worker/firefox-binary.ts';
import { WorkerInstance } from '../worker/instance.ts';
import { bundledPlaywright, playwrightCacheDir, playwrightOf, type Playwright } from '../worker/playwright.ts';
import { PortPool } from '../worker/ports.ts';
import { prepareVideo, type VideoSupport } from '../worker/video.ts';

/** A version claim lives this long unless renewed, so a process that dies while starting one frees it soon. */
const CLAIM_TTL_S = 30;
/** A failed start is reported to waiting proxies this long; the next client after it tries again. */
const FAILED_TTL_S = 10;

export function workerRole(ctx: Ctx): Role {
  const { config, logger } = ctx;
  const instances = new Set<WorkerInstance>();
  const loops: Promise<void>[] = [];
  let subscriber: Subscriber | undefined;
  let stopWatchingRedis = () => {};
  let stopping = false;
  const ports = new PortPool(config.workerHost, portRange(config.workerPorts));
  const advertise = advertisedHost(config.workerHost, config.advertiseHost);
  if (advertise.detected) logger.info('workerHost is a wildcard address and advertiseHost is unset: advertising this host\'s own address', { workerHost: config.workerHost, advertiseHost: advertise.host });
  const processId = randomUUID().replaceAll('-', '');
  const cacheDir = playwrightCacheDir(config.playwrightCache);
  /** '{browserType} {major.minor}' of every version this process serves or is starting. */
  const serving = new Set<string>();
  let video: VideoSupport | undefined;

  /** Starts one browser server of a type and files it with the running ones. */
  async function launch(browserType: BrowserType, playwright: Playwright, cdp: boolean, firefox?: string): Promise<WorkerInstance> {
    if (!firefox) video?.provide(playwright);
    const instance = new WorkerInstance(ctx, browserType, playwright, cdp, subscriber!, ports, advertise.host, firefox);
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
          current = await launch(first.browserType, first.playwright, first.servesCdp, first.firefoxBinary);
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

  /** A client of `version` waits and no worker serves it: claim it (one process does) and start `workers` servers of it. */
  async function startOnDemand(browserType: BrowserType, version: string): Promise<void> {
    const what = `${browserType} ${version}`;
    if (stopping || serving.has(what) || !onDemandAllows(config, version)) return;
    const claim = ctx.keys.versionClaim({ browserType, version });
    serving.add(what);
    const claimed = await ctx.backend.send(['SET', claim, `starting:${processId}`, 'NX', 'EX', CLAIM_TTL_S]).catch(() => null);
    if (claimed !== 'OK') return void serving.delete(what);
    const renew = setInterval(() => void ctx.backend.send(['EXPIRE', claim, CLAIM_TTL_S]).catch(() => {}), (CLAIM_TTL_S * 1000) / 3);
    try {
      logger.info('starting browser servers of a Playwright version on demand', { browserType, version });
      const playwright = await playwrightOf(version, cacheDir, config.registryTimeout * 1000);
      const started = await Promise.allSettled(Array.from({ length: config.workers }, () => launch(browserType, playwright, false)));
      const ok = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      if (!ok.length) throw (started[0] as PromiseRejectedResult).reason;
      if (stopping) {
        // the role stopped while they started: its drain did not see them
        await Promise.all(ok.map((instance) => instance.drain('worker stopping')));
        throw new GridError('the worker is stopping', { code: 'COORD_ERR_BROWSER_GRID_STOPPING' });
      }
      for (const instance of ok) loops.push(supervise(instance));
      logger.info('browser servers started on demand', { browserType, version: playwright.version, source: playwright.source, count: ok.length });
      clearInterval(renew);
      await ctx.backend.send(['DEL', claim]).catch(() => {});
    } catch (error) {
      clearInterval(renew);
      serving.delete(what);
      const why = (error as Error).message.split('\n')[0]!;
      logger.error('could not start a Playwright version on demand', { browserType, version, error: why });
      await ctx.backend.send(['SET', claim, `failed: ${why}`, 'EX', FAILED_TTL_S]).catch(() => {});
    }
  }

  return {
    async start() {
      // a missing Firefox fails the start before any browser is launched
      const firefox = config.bidi ? firefoxBinary(config.firefoxBinary) : undefined;
      video = prepareVideo(config.ffmpeg, cacheDir, logger); // before any playwright-core is loaded
      // Redis came back (maybe empty): register again now, not at the next heartbeat
      stopWatchingRedis = ctx.backend.onState((state) => {
        if (state === 'ready') for (const instance of instances) void instance.beat();
      });
      subscriber = await ctx.backend.subscriber();
      const wanted = new Map(config.browserTypes.map((browserType) => [ctx.channels.versionWanted({ browserType }), browserType]));
      subscriber.onMessage(({ channel, message }) => {
        const browserType = wanted.get(channel);
        if (browserType) return void startOnDemand(browserType, String(message));
        for (const instance of instances) if (instance.commandChannel === channel) void instance.drain('shutdown command');
      });
      if (config.versionsOnDemand) await subscriber.subscribe(...wanted.keys());
      // every listed version is found (or installed) before any server starts: a bad version fails the start
      const versions = await Promise.all((config.playwrightVersions ?? ['']).map((v) => (v ? playwrightOf(v, cacheDir, config.registryTimeout * 1000) : bundledPlaywright())));
      for (const playwright of versions) {
        if (playwright.source !== 'bundled') logger.info('playwright-core found', { version: playwright.version, source: playwright.source, cache: cacheDir });
        for (const type of config.browserTypes) serving.add(`${type} ${majorMinor(playwright.version)}`);
      }
      // CDP does not depend on the Playwright version: one version's Chromium servers run the CDP fronts
      const plan = versions.flatMap((playwright, v) =>
        config.browserTypes.flatMap((type) => Array.from({ length: config.workers }, () => ({ type, playwright, cdp: v === 0, firefox: undefined as string | undefined }))),
      );
      // BiDi workers are of no Playwright version: `workers` of them, beside the servers
      if (firefox) plan.push(...Array.from({ length: config.workers }, () => ({ type: 'firefox' as const, playwright: versions[0]!, cdp: false, firefox })));
      const started = await Promise.allSettled(plan.map(({ type, playwright, cdp, firefox }) => launch(type, playwright, cdp, firefox)));
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) {
        stopping = true;
        await Promise.all([...instances].map((i) => i.close('start failed')));
        await subscriber.close();
        throw (failed as PromiseRejectedResult).reason;
      }
      for (const r of started) loops.push(supervise((r as PromiseFulfilledResult<WorkerInstance>).value));
      logger.info('workers ready', { count: instances.size, browserTypes: config.browserTypes, versions: versions.map((p) => p.version) });
    },
    // Draining waits up to drainTimeout for sessions to close; closing the servers after it takes a few seconds more.
    stopTimeout: config.drainTimeout + 30,
    async stop(reason) {
      stopping = true;
      await Promise.all([...instances].map((i) => i.drain(reason)));
      await Promise.all(loops);
      await redisDeadline(subscriber?.close() ?? Promise.resolve()).catch(() => {});
      stopWatchingRedis();
    },
  };
}
