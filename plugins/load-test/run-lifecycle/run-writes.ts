// What a running test writes as it goes: users assigned to the workers or
// taken back (through the scripts, each with its command), and the events of
// its timeline (users:timeline, the page's and report's markers).
import type { Ctx } from '../context.ts';
import { addUsers, nowSeconds, removeUsers } from '../scripts.ts';
import type { Run } from './test-run.ts';

/** Assigns `count` users (or the given ids, a dead worker's) over the test's workers. */
export async function assign(ctx: Ctx, run: Run, count: number, ids: readonly string[]): Promise<void> {
  if (!run.snapshot.length) {
    ctx.logger.warn('no alive worker to take users', { users: count });
    return;
  }
  run.assigned += (await addUsers(ctx, run.epoch, { count, ids, target: run.target, workers: run.snapshot })).length;
}

/** Takes `count` users back (the highest ids). */
export async function unassign(ctx: Ctx, run: Run, count: number): Promise<void> {
  run.assigned -= (await removeUsers(ctx, run.epoch, { count, target: run.target })).length;
}

/** One event of the test's timeline. */
export async function timeline(ctx: Ctx, run: Run, event: string, detail = '', users = run.assigned): Promise<void> {
  const { backend, keys, config } = ctx;
  await backend.send([
    'XADD', keys.timeline(), 'MAXLEN', '~', config.timelineMaxLen, '*',
    'ts', nowSeconds(ctx), 'epoch', run.epoch, 'users', users, 'target', run.target, 'event', event, ...(detail ? ['detail', detail] : []),
  ]);
}
