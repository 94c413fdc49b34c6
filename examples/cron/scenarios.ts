// Conformance scenarios: drive the four scripts the way the roles do, so the
// keyspace afterwards shows every key the plugin writes. The conformance
// suite snapshots it and holds every key to the contract.
import type { ConformanceScenario } from 'coordkit/plugin';
import type { CronConfig, CronJob } from './config.ts';
import type { CronKeys } from './contract.ts';
import { claimTick, finishTick, scheduleTick, sweepLeases } from './ticks.ts';
import type { CronContext } from './context.ts';

const backup: CronJob = { id: 'backup', every: 60, command: 'true', timeout: 30 };
const report: CronJob = { id: 'report', every: 10, command: 'true' };

/** Three schedulers queue the same tick; only one call queues it. */
async function scheduleEverywhere(ctx: CronContext, job: CronJob, nowMs: number): Promise<void> {
  const results = await Promise.all([1, 2, 3].map(() => scheduleTick(ctx, job, nowMs)));
  if (results.filter((r) => r.queued).length !== 1) throw new Error(`tick of ${job.id} queued ${results.filter((r) => r.queued).length} times, expected once`);
}

export const scenarios: ConformanceScenario<CronConfig, CronKeys>[] = [
  {
    name: 'a tick is queued once by three schedulers, claimed by one runner and recorded when it ends',
    expects: ['jobs', 'job', 'runs'],
    async run(ctx) {
      const now = ctx.clock.now();
      await scheduleEverywhere(ctx, backup, now);
      const claimed = await claimTick(ctx, 'runner-a', now);
      if (!claimed) throw new Error('nothing to claim after scheduling');
      if (await claimTick(ctx, 'runner-b', now)) throw new Error('a second runner claimed the same tick');
      await finishTick(ctx, { jobId: claimed.jobId, tick: claimed.tick, runner: 'runner-a', status: 'ok', exitCode: 0, startedAt: now, finishedAt: now + 5 });
    },
  },
  {
    name: 'ticks wait in the queue while one runs under its lease',
    expects: ['jobs', 'job', 'due', 'lease', 'running'],
    async run(ctx) {
      const now = ctx.clock.now();
      await scheduleEverywhere(ctx, backup, now);
      await claimTick(ctx, 'runner-a', now);
      await scheduleEverywhere(ctx, report, now);
    },
  },
  {
    name: 'a runner dies: its tick is recorded as lost; a tick overtaken by a later one is skipped',
    expects: ['job', 'runs'],
    async run(ctx) {
      const now = ctx.clock.now();
      await scheduleTick(ctx, report, now);
      const claimed = await claimTick(ctx, 'runner-dies', now);
      if (!claimed) throw new Error('nothing to claim after scheduling');
      // The lease running out, without waiting for it: the runner is gone and its lease with it.
      await ctx.backend.send(['DEL', ctx.keys.lease({ jobId: claimed.jobId, tick: claimed.tick })]);
      const leaseEnds = now + (claimed.timeout + ctx.config.leaseGrace + 1) * 1000;
      const lost = await sweepLeases(ctx, leaseEnds);
      if (lost.length !== 1) throw new Error(`sweep recorded ${lost.length} lost ticks, expected 1`);
      // Two ticks queued while no runner was up: the older one is skipped, the newer one runs (and fails).
      await scheduleTick(ctx, report, now + 10_000);
      await scheduleTick(ctx, report, now + 20_000);
      const next = await claimTick(ctx, 'runner-b', now + 20_000);
      if (next?.tick !== claimed.tick + 20) throw new Error(`claimed tick ${next?.tick}, expected ${claimed.tick + 20} (the older one skipped)`);
      await finishTick(ctx, { jobId: next.jobId, tick: next.tick, runner: 'runner-b', status: 'failed', exitCode: 3, startedAt: now + 20_000, finishedAt: now + 20_500 });
    },
  },
];
