// Workers that come or go while a test runs: one that joins gets start_test
// and users from then on; a dead one is dropped (its heartbeat stale past
// deadAfter) and its users are given to the others.
import type { Ctx } from '../context.ts';
import { broadcast, dropWorker } from '../scripts.ts';
import type { WorkerView } from './keyspace.ts';
import { assign, timeline } from './run-writes.ts';
import type { Run } from './test-run.ts';

/** Sends start_test to alive workers the running test does not have yet, which then take users like the others. */
export async function startJoinedWorkers(ctx: Ctx, run: Run, workers: readonly WorkerView[]): Promise<void> {
  const joined = workers.filter((w) => w.alive && !run.snapshot.includes(w.id)).map((w) => w.id);
  if (!joined.length) return;
  await broadcast(ctx, run.epoch, 'start_test', run.payload, joined);
  run.snapshot.push(...joined);
  ctx.logger.info('workers joined the test', { workers: joined });
}

/** Drops a dead worker; in a running test that is not `stopping`, its users go to the others (one ramp step at a time). */
export async function dropDeadWorker(ctx: Ctx, w: WorkerView, run: Run | undefined, stopping: boolean): Promise<void> {
  const users = await dropWorker(ctx, w.id);
  ctx.logger.warn('worker dead: dropped', { workerId: w.id, lastHeartbeatAgeS: w.lastHeartbeatAgeS, status: w.status, users: users.length });
  if (!run) return;
  run.snapshot = run.snapshot.filter((id) => id !== w.id);
  run.aggregator.workersLost.push(w.id);
  await timeline(ctx, run, 'worker_dead', `${w.id}: ${users.length} users reassigned`);
  if (!users.length || stopping) return;
  while (run.rampBusy) await new Promise((r) => setTimeout(r, 10));
  run.rampBusy = true;
  try {
    run.assigned -= users.length;
    await assign(ctx, run, users.length, users);
  } finally {
    run.rampBusy = false;
  }
}
