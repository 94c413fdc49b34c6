// What a running test writes as it goes: users assigned to the workers or
// taken back (through the scripts, each with its command), and the events of
// its timeline (users:timeline, the page's and report's markers).
import type { Ctx } from '../context.ts';
import { addUsers, nowSeconds, removeUsers } from '../scripts.ts';
import type { Run } from './test-run.ts';

/**
 * Users assigned per addUsers call at most. The script holds Redis while it runs (about 10-20 µs a user), and
 * a ramp step can ask for any number: 10,000 users at once took one 190 ms call (bench/scale/load-test.mjs).
 */
export const ASSIGN_CHUNK = 200;

/** Assigns `count` users (or the given ids, a dead worker's) over the test's workers, ASSIGN_CHUNK per script call. */
export async function assign(ctx: Ctx, run: Run, count: number, ids: readonly string[]): Promise<void> {
  if (!run.snapshot.length) {
    ctx.logger.warn('no alive worker to take users', { users: count });
    return;
  }
  const total = ids.length || count;
  for (let from = 0; from < total; from += ASSIGN_CHUNK) {
    const chunk = ids.length ? { count: 0, ids: ids.slice(from, from + ASSIGN_CHUNK) } : { count: Math.min(ASSIGN_CHUNK, count - from), ids: [] };
    run.assigned += (await addUsers(ctx, run.epoch, { ...chunk, target: run.target, workers: run.snapshot })).length;
  }
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
