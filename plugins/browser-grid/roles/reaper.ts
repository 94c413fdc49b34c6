// The reaper: removes workers whose heartbeat is older than the stale
// threshold (with their counter fields), and gives back the capacity leased by
// proxies that died without closing their sessions. Runs inside each proxy by
// default, or alone with `--role reaper`.
import type { Role } from '../../../entries/plugin.ts';
import { browserTypes } from '../refs.ts';
import type { Ctx } from '../context.ts';
import { redisDeadline } from '../redis-deadline.ts';
import { reapProxy, reapWorkers } from '../scripts.ts';

/**
 * Stale workers removed per reapWorkers call. Each costs tens of µs in Redis (its hash, counter fields,
 * index entries and their keyspace events): 500 made one call of a 10,000-worker pass take up to 19 ms on a
 * loaded machine (bench/scale.mjs), a stall for every other client; 100 keep each call to a few ms.
 */
const BATCH = 100;

export interface ReapResult {
  workers: string[];
  proxies: string[];
  leasesReturned: number;
}

/** One pass of the reaper over every browser type and every silent proxy. */
export async function reapOnce(ctx: Ctx): Promise<ReapResult> {
  const result: ReapResult = { workers: [], proxies: [], leasesReturned: 0 };
  for (const browserType of browserTypes) {
    for (;;) {
      const reaped = await reapWorkers(ctx, browserType, BATCH);
      result.workers.push(...reaped);
      if (reaped.length < BATCH) break;
    }
  }
  const proxies = await reapSilentProxies(ctx, ctx.config.staleThreshold * 1000);
  return { ...result, ...proxies };
}

/**
 * Gives back the leases of every proxy whose heartbeat is older than `silentMs` (killed -9).
 * reapProxy checks the heartbeat again inside the script, so proxies racing on the same dead
 * one give its leases back once; a live proxy wrongly taken for dead files its own again on
 * its next heartbeat (restoreLeases).
 */
export async function reapSilentProxies(ctx: Ctx, silentMs: number): Promise<Pick<ReapResult, 'proxies' | 'leasesReturned'>> {
  const { clock, keys, backend } = ctx;
  const result = { proxies: [] as string[], leasesReturned: 0 };
  const silent = (await backend.send(['ZRANGEBYSCORE', keys.proxyIndex(), '-inf', `(${clock.now() - silentMs}`])) as string[];
  for (const proxyId of silent) {
    const returned = await reapProxy(ctx, proxyId, silentMs);
    if (returned >= 0) {
      result.proxies.push(proxyId);
      result.leasesReturned += returned;
    }
  }
  return result;
}

/** Runs reapOnce every reaperRunInterval until stopped; logs what it removed. */
export function reaperLoop(ctx: Ctx): { stop(): Promise<void> } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = reapOnce(ctx)
      .then((r) => {
        for (const ref of r.workers) ctx.logger.info('reaped stale worker', { worker: ref });
        for (const proxyId of r.proxies) ctx.logger.info('returned leases of a silent proxy', { proxyId, leases: r.leasesReturned });
      })
      .catch((error) => ctx.logger.warn('reaper pass failed', { error: (error as Error).message }))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, ctx.config.reaperRunInterval * 1000);
      });
  };
  timer = setTimeout(tick, ctx.config.reaperRunInterval * 1000);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // a pass waiting for a Redis that is gone is left behind: the process is stopping
      await redisDeadline(running).catch(() => {});
    },
  };
}

export function reaperRole(ctx: Ctx): Role {
  let loop: { stop(): Promise<void> } | undefined;
  return {
    async start() {
      loop = reaperLoop(ctx);
      ctx.logger.info('reaper running', { everySeconds: ctx.config.reaperRunInterval, staleSeconds: ctx.config.staleThreshold });
    },
    async stop() {
      await loop?.stop();
    },
  };
}
