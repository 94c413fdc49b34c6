// The scheduler: at every tick of every job it queues the tick (scheduleTick;
// run it on as many machines as you like, each tick is queued once), wakes the
// runners, and every sweepInterval records ticks whose lease ran out as lost.
import type { Role } from 'coordkit/plugin';
import { scheduleTick, sweepLeases, tickOf } from '../ticks.ts';
import type { CronContext } from '../context.ts';

/** After a failed pass (Redis away), the scheduler tries again this much later. */
const RETRY_MS = 1000;

export function schedulerRole(ctx: CronContext): Role {
  const { config, clock, logger } = ctx;
  const wake = ctx.channels.wake();
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;
  let lastSweep = 0;

  /** Queues the current tick of each job; returns ms until the next tick of any job (or the next sweep). */
  async function pass(): Promise<number> {
    const now = clock.now();
    for (const job of config.jobs) {
      const { queued, tick } = await scheduleTick(ctx, job, now);
      if (!queued) continue;
      logger.debug('tick queued', { job: job.id, tick });
      await ctx.backend.send(['PUBLISH', wake, `${job.id}:${tick}`]);
    }
    if (now - lastSweep >= config.sweepInterval * 1000) {
      lastSweep = now;
      for (const item of await sweepLeases(ctx, now)) logger.warn('tick lost: its lease expired before the run finished', { tick: item });
    }
    const nextTick = Math.min(...config.jobs.map((job) => (tickOf(job, now) + job.every) * 1000));
    return Math.max(10, Math.min(nextTick, lastSweep + config.sweepInterval * 1000) - clock.now());
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      let wait: number;
      try {
        wait = await pass();
      } catch (error) {
        logger.warn('scheduler pass failed', { error: (error as Error).message });
        wait = RETRY_MS;
      }
      await clock.sleep(wait, stopping.signal).catch(() => {});
    }
  }

  return {
    async start() {
      loop = run();
      logger.info('scheduler running', { jobs: config.jobs.map((j) => `${j.id} every ${j.every}s`) });
    },
    async stop() {
      stopping.abort(new Error('scheduler stopping'));
      await loop;
    },
  };
}
