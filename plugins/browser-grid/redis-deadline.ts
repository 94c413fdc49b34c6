// Bounded Redis calls for the proxy. The adapters hold commands while Redis is
// away (they wait for the reconnect rather than fail), which is right for
// workers but would leave a connecting client hanging: the proxy gives each
// call the kit's withDeadline, and a call that completes after its caller gave
// up is undone by `undoLate`, so nothing stays counted for a client that
// already got its answer.
import { withDeadline } from '../../entries/plugin.ts';
import { GridError } from './errors.ts';

/** How long a proxy waits for one Redis call before it answers the client 503 (and a draining worker for its own). */
export const REDIS_CALL_MS = 3000;

/** The call's value, or a GridError (COORD_ERR_BROWSER_GRID_REDIS_TIMEOUT) after REDIS_CALL_MS; the call's own failure passes through. */
export function redisDeadline<T>(call: Promise<T>, undoLate?: (value: T) => void): Promise<T> {
  let outcome: { value: T } | { error: unknown } | undefined;
  let gaveUp = false;
  call.then(
    (value) => {
      outcome = { value };
      if (gaveUp) undoLate?.(value);
    },
    (error: unknown) => void (outcome = { error }),
  );
  return withDeadline(call, REDIS_CALL_MS).catch((error: unknown) => {
    if (outcome && 'error' in outcome && outcome.error === error) throw error;
    gaveUp = true;
    // it answered in the moment between the deadline and this
    if (outcome && 'value' in outcome) undoLate?.(outcome.value);
    throw new GridError(`Redis did not answer within ${REDIS_CALL_MS} ms`, { code: 'COORD_ERR_BROWSER_GRID_REDIS_TIMEOUT', cause: error });
  });
}
