// The users of a running test moving towards its target at the spawn rate,
// one step every RAMP_TICK_MS, and a load shape followed on the same tick:
// the users (and, for rate stages, the arrival rate) it asks for now.
import type { Ctx } from '../context.ts';
import { type LoadShape, shapeWant, stageValueAhead } from '../scenario/shape.ts';
import { broadcast } from '../scripts.ts';
import { assign, timeline, unassign } from './run-writes.ts';
import { AT_ONCE, RAMP_TICK_MS, type Run } from './test-run.ts';

/** What the ramp needs of the controller: whether the test still runs here, and a way to stop it. */
export interface RampHost {
  readonly ctx: Ctx;
  /** The test is the running one and is not stopping. */
  runs(run: Run): boolean;
  stop(reason: string): Promise<unknown>;
}

/** One step: users added or removed towards the target, as many as the spawn rate allows since the last. */
export async function rampStep(host: RampHost, run: Run): Promise<void> {
  const { ctx } = host;
  if (run.rampBusy || !host.runs(run)) return;
  run.rampBusy = true;
  try {
    const now = performance.now();
    if (run.shape && !(await followShape(host, run, run.shape, now))) return;
    run.rampCarry += ((now - run.lastRampAt) / 1000) * run.spawnRate;
    run.lastRampAt = now;
    const gap = run.target - run.assigned;
    if (gap === 0) {
      run.rampCarry = 0;
      return;
    }
    const n = Math.min(Math.abs(gap), Math.floor(run.rampCarry));
    if (n === 0) return;
    run.rampCarry -= n;
    if (gap > 0) await assign(ctx, run, n, []);
    else await unassign(ctx, run, n);
    run.aggregator.users(ctx.clock.now(), run.assigned);
    if (run.assigned === run.target) await timeline(ctx, run, 'users', `reached ${run.target}`);
  } catch (err) {
    ctx.logger.error('changing users failed', { error: (err as Error).message });
  } finally {
    run.rampBusy = false;
  }
}

/**
 * Sets the users (and the arrival rate) the load shape wants now; false
 * when the shape is over or failed and the test is stopping.
 */
async function followShape(host: RampHost, run: Run, shape: LoadShape, now: number): Promise<boolean> {
  const { ctx } = host;
  const elapsed = now - run.runningAt;
  let want;
  try {
    want = shapeWant(shape, elapsed);
  } catch (err) {
    ctx.logger.error('the load shape failed: stopping the test', { error: (err as Error).message });
    void host.stop('load shape failed').catch(() => {});
    return false;
  }
  if (want === null) {
    void host.stop('load shape ended').catch(() => {});
    return false;
  }
  if (want.users !== undefined && want.users !== run.target) {
    run.target = want.users;
    run.payload.target_users = want.users;
  }
  if (shape.kind === 'function') run.spawnRate = want.spawnRate ?? AT_ONCE;
  if (shape.kind === 'rate-stages') {
    // The rate holds until the next tick: send the one of the middle of that time (within the stage), so a ramp's iterations add up.
    const rate = stageValueAhead(shape.stages, shape.startRate, elapsed, RAMP_TICK_MS / 2) ?? 0;
    const sent = run.sentRate ?? 0;
    if (Math.abs(rate - sent) > Math.max(0.002 * Math.max(rate, sent), 0.001)) {
      await broadcast(ctx, run.epoch, 'set_rate', { rate }, run.snapshot);
      run.sentRate = rate;
      run.payload.rate = rate;
    }
  }
  return true;
}
