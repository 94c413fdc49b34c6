// The worker role as a process runs it: one worker (load-test.workers: 1, the
// default), or several — `auto`: one per core — each a worker of its own (its
// own id, command stream, users and metric batches, as if it were a process
// of its own), with its users in a worker thread of their own, so they run on
// every core of the machine. load-test.threads puts a single worker's users in
// a thread too (`coord load run` does: a stop can then always end them).
import { availableParallelism } from 'node:os';
import type { Ctx } from '../context.ts';
import { newWorkerId, workerRole, type WorkerRole } from './worker.ts';

/** How many workers `workers` asks for: `auto` is one per core (os.availableParallelism()). */
export function workerCount(workers: number | 'auto'): number {
  return workers === 'auto' ? availableParallelism() : workers;
}

export function workersRole(ctx: Ctx): WorkerRole {
  const { workers, threads, workerId } = ctx.config;
  if (workers === 1) return workerRole(ctx, { threads });
  const base = workerId ?? newWorkerId();
  const all = Array.from({ length: workerCount(workers) }, (_, i) => workerRole(ctx, { id: `${base}-${i + 1}`, threads: true }));
  return {
    id: base,
    session: () => all.find((w) => w.session())?.session(),
    interrupt: () => all.forEach((w) => w.interrupt()),
    async start() {
      await Promise.all(all.map((w) => w.start()));
    },
    async stop(reason) {
      await Promise.all(all.map((w) => w.stop(reason)));
    },
  };
}
