// ready(): the first PING, bounded by READY_TIMEOUT_MS, failing as one line
// that says where and why — the line the CLI prints for an unreachable URL.
// readyOnce() keeps it for the adapters' ready().
import { ConnectionError } from '../../core/backend.ts';
import type { ConnectionState } from './connection-state.ts';
import { errorText } from './error-text.ts';
import { READY_TIMEOUT_MS } from './retry.ts';

export function firstPing(
  ping: () => Promise<unknown>,
  where: { display: string; state: ConnectionState; secret?: string },
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      reject(new ConnectionError(`cannot reach Redis at ${where.display}: ${reason}`, { code: 'COORD_ERR_REDIS_UNREACHABLE' }));
    };
    const timer = setTimeout(
      () => fail(where.state.lastError ?? `no answer within ${timeoutMs / 1000} s`),
      timeoutMs,
    );
    timer.unref();
    ping().then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      // Closed while waiting: the last connection error (if any) says more than "closed".
      (error: unknown) =>
        fail(error instanceof ConnectionError ? (where.state.lastError ?? 'the backend was closed') : errorText(error, where.secret)),
    );
  });
}

/** ready() of a Redis adapter: one firstPing for every caller; a success is kept, a failure forgotten so a later call tries again. */
export function readyOnce(ping: () => Promise<unknown>, where: { display: string; state: ConnectionState; secret?: string }): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () =>
    (ready ??= firstPing(ping, where).catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));
}
