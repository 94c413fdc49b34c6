// The four steps of a tick, each one Lua script: the scheduler queues it,
// a runner claims it under a lease and finishes it, and the sweep records a
// tick whose lease ran out as lost. Roles, scenarios and tests all call these.
import { timeoutOf, type CronJob } from './config.ts';
import type { CronContext } from './context.ts';
import { contract } from './contract.ts';

/** How many entries the runs stream keeps (the contract's cap, passed to the scripts). */
const historyLength = contract.keys.runs.maxLength;

/** The tick a job is in at `nowMs`: the Unix second it started, a multiple of `every`. */
export function tickOf(job: Pick<CronJob, 'every'>, nowMs: number): number {
  return Math.floor(nowMs / 1000 / job.every) * job.every;
}

/** Queues the job's current tick; true when this call queued it, false when another scheduler had. */
export async function scheduleTick(ctx: CronContext, job: CronJob, nowMs = ctx.clock.now()): Promise<{ queued: boolean; tick: number }> {
  const tick = tickOf(job, nowMs);
  const queued = await ctx.scripts.run('scheduleTick', {
    keys: { jobs: {}, job: { jobId: job.id }, due: {} },
    args: { jobId: job.id, tick, nowMs, every: job.every, command: job.command, timeout: timeoutOf(job) },
  });
  return { queued: queued === 1, tick };
}

export interface Claimed {
  jobId: string;
  tick: number;
  command: string;
  /** Seconds the run may take. */
  timeout: number;
}

/** Claims the oldest due tick for `runner`; undefined when nothing is due. */
export async function claimTick(ctx: CronContext, runner: string, nowMs = ctx.clock.now()): Promise<Claimed | undefined> {
  const reply = (await ctx.scripts.run('claimTick', {
    keys: { due: {}, running: {}, runs: {} },
    args: { runner, nowMs, nowS: Math.floor(nowMs / 1000), leaseGrace: ctx.config.leaseGrace, historyLength },
  })) as string[];
  if (!reply.length) return undefined;
  const [jobId, tick, command, timeout] = reply as [string, string, string, string];
  return { jobId, tick: Number(tick), command, timeout: Number(timeout) };
}

export interface Finished {
  jobId: string;
  tick: number;
  runner: string;
  status: 'ok' | 'failed';
  exitCode: number;
  startedAt: number;
  finishedAt: number;
}

/** Records a run and releases its lease; false when the sweep had recorded the tick as lost already. */
export async function finishTick(ctx: CronContext, run: Finished): Promise<boolean> {
  const { jobId, tick } = run;
  const recorded = await ctx.scripts.run('finishTick', {
    keys: { job: { jobId }, lease: { jobId, tick }, running: {}, runs: {} },
    args: { ...run, historyLength },
  });
  return recorded === 1;
}

/** Records the ticks whose lease expired unfinished as lost; returns them as 'jobId:tick'. */
export async function sweepLeases(ctx: CronContext, nowMs = ctx.clock.now(), limit = 500): Promise<string[]> {
  return (await ctx.scripts.run('sweepLeases', {
    keys: { running: {}, runs: {} },
    args: { nowS: Math.floor(nowMs / 1000), limit, historyLength },
  })) as string[];
}
