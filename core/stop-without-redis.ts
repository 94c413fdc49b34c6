// A stopping process gives up on a Redis that stays unreachable. The adapters
// hold a call made while Redis is gone until it is back (so a running role
// rides out a restart); during a stop that made each role's stop wait out its
// roleStopTimeout on calls nobody would answer. So the runtime closes the
// backend it opened once Redis has been unreachable for a short grace while
// stopping: the held calls, and every later one, fail at once with
// ConnectionError (COORD_ERR_BACKEND_CLOSED), which a role's stop takes as it
// takes any failed Redis call, and the stops go on. A backend that never
// loses Redis (embedded) never says 'reconnecting', and a Redis that answers
// is never given up: then nothing changes.
import type { Backend } from './backend.ts';
import type { Logger } from './logger.ts';

/** How long a stopping process waits for an unreachable Redis to come back before it closes the backend. */
export const STOP_REDIS_GRACE_MS = 3000;

export interface StopWithoutRedis {
  /** The process starts stopping: from now on an unreachable Redis is given STOP_REDIS_GRACE_MS. */
  stopping(): void;
  /** The stop is over: no more early close. */
  dispose(): void;
}

/** Watches `backend` (one the runtime opened and closes) from the moment it has answered. */
export function closeWhenUnreachable(backend: Backend, logger: Logger, graceMs = STOP_REDIS_GRACE_MS): StopWithoutRedis {
  let unreachable: string | undefined; // why, while Redis is unreachable
  let stopping = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (!stopping || unreachable === undefined || timer) return;
    timer = setTimeout(() => {
      logger.warn(`Redis at ${backend.displayUrl} unreachable while stopping (${unreachable}) and not back within ${graceMs / 1000} s: closing the backend, so the roles stop without it`, {
        code: 'COORD_ERR_STOP_REDIS_UNREACHABLE',
      });
      off();
      void backend.close().catch(() => {}); // the runtime's own close at the end of the stop reports a failure
    }, graceMs);
  };
  const off = backend.onState((state, detail) => {
    if (state === 'reconnecting' || state === 'connecting') {
      unreachable ??= detail ?? 'connection lost';
      arm();
    } else {
      unreachable = undefined;
      clearTimeout(timer);
      timer = undefined;
    }
  });
  return {
    stopping() {
      stopping = true;
      arm();
    },
    dispose() {
      off();
      clearTimeout(timer);
    },
  };
}
