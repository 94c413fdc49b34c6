// What the orchestrator waits for from its workers: some to be alive before a
// test starts, each one sent a command to acknowledge it, and each one's
// final request count once its users have stopped.
import type { Command } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';
import { streamIdAtLeast } from '../envelope.ts';
import { ConflictError } from '../errors.ts';
import { readWorkers, type WorkerView } from './keyspace.ts';
import { START_ACK_MS, type Run } from './test-run.ts';

/** Waits for the workers sent a command to acknowledge it; resolves to those (still alive) that did not in time. */
export async function waitForAcks(ctx: Ctx, run: Run, sent: Map<string, string>, command: 'start_test' | 'stop_test'): Promise<string[]> {
  // A start waits as long as the workers are alive (a cold one may compile a .ts scenario on a busy machine), within reason.
  const deadline = performance.now() + (command === 'start_test' ? START_ACK_MS : ctx.config.gracefulStop * 1000 + 15_000);
  const waiting = new Map(sent);
  // A worker on the same machine stops its users in milliseconds: poll soon, then less often.
  let pause = 2;
  while (waiting.size && performance.now() < deadline) {
    const ids = [...waiting.keys()];
    const replies = (await ctx.backend.pipeline([['GET', ctx.keys.generation()], ...ids.map((workerId): Command => ['GET', ctx.keys.workerAck({ workerId })])])) as (string | null)[];
    if (replies[0] !== run.generation) throw new ConflictError('the coordination state is gone (Redis restarted empty?): no worker will acknowledge');
    const acks = replies.slice(1);
    const alive = new Set((await readWorkers(ctx)).filter((w) => w.alive).map((w) => w.id));
    ids.forEach((id, i) => {
      const ack = acks[i];
      if ((typeof ack === 'string' && streamIdAtLeast(ack, waiting.get(id)!)) || !alive.has(id)) waiting.delete(id);
    });
    if (waiting.size) await ctx.clock.sleep(pause);
    pause = Math.min(50, pause * 2);
  }
  if (waiting.size) ctx.logger.warn(`workers did not acknowledge ${command} in time`, { workers: [...waiting.keys()] });
  return [...waiting.keys()];
}

/** The alive workers, once there is one (within load-test.waitForWorkers). */
export async function waitForWorkers(ctx: Ctx): Promise<WorkerView[]> {
  const deadline = performance.now() + ctx.config.waitForWorkers * 1000;
  for (;;) {
    const alive = (await readWorkers(ctx)).filter((w) => w.alive);
    if (alive.length) return alive;
    if (performance.now() >= deadline) {
      throw new ConflictError(`no worker registered at ${ctx.backend.displayUrl}: start some with coord run --plugin load-test --role worker`);
    }
    await ctx.clock.sleep(100);
  }
}

/**
 * Each worker's final count of HTTP requests (its heartbeat has it once its users stopped), claimed in the test's
 * accounting. Returns the workers whose count for this test could not be read (an error, or none written).
 */
export async function readTallies(ctx: Ctx, run: Run, workers: readonly string[]): Promise<string[]> {
  const ids = [...new Set(workers)];
  if (!ids.length) return [];
  const replies = await ctx.backend.pipeline(ids.map((workerId): Command => ['HMGET', ctx.keys.workerStatus({ workerId }), 'requests', 'requests_epoch', 'requests_writer']));
  return ids.filter((id, i) => {
    const [requests, epoch, writer] = (replies[i] instanceof Error ? [] : replies[i]) as (string | null)[];
    if (requests == null || writer == null || Number(epoch) !== run.epoch) return true;
    run.accounting.claim(id, writer, Number(requests));
    return false;
  });
}
