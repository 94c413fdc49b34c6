// Redis calls a worker or an orchestrator must not wait on forever. While
// Redis fails over, pauses or is gone, the clients hold commands until it is
// back; a heartbeat, a stop or a test's end must still happen in time, so
// these calls are given a bound and what they could not do is said.
import { withDeadline } from '../../entries/plugin.ts';

/** The longest one bookkeeping write (users marked stopped, a probe value) is waited for in a stop. */
export const REDIS_STEP_MS = 2000;

/** How long a stopping worker writes its last metrics again while Redis fails over (a cluster promotes a replica in ~5 s). */
export const LAST_METRICS_MS = 10_000;

/** The promise's value, or a rejection "WHAT: no answer within N s" after `ms` (core/deadline.ts). */
export const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => withDeadline(promise, ms, what);

/**
 * Calls `attempt` until it resolves, for at most `ms` in all (each call
 * bounded by what is left, with `pauseMs` between failures): a failover
 * answers with errors (CLUSTERDOWN, MOVED, a refused connection) for a few
 * seconds before the promoted replica serves. Rejects with the last error.
 */
export async function retryWithin(attempt: () => Promise<void>, ms: number, what: string, pauseMs = 250): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    try {
      return await within(attempt(), Math.max(1, deadline - performance.now()), what);
    } catch (err) {
      if (performance.now() + pauseMs >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
