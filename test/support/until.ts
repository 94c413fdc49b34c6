// Polling for a state the test cannot be told about (a key to appear, a
// process to be reaped): every few ms until check() is truthy, or a clear
// error naming what did not happen.

/** Resolves to check()'s first truthy value; rejects naming `what` after timeoutMs (a function: worded when it fails, e.g. with a process's output so far). */
export async function until<T>(what: string | (() => string), check: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      const last = await lastLook(check);
      if (last) return last as NonNullable<T>;
      throw new Error(`${typeof what === 'function' ? what() : what}: not within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * One more check after the event loop has read its sockets. A process stalled
 * past the deadline (a loaded machine) wakes in the timers phase, before the
 * reply that arrived meanwhile is read: without this it fails on a reply it holds.
 */
export async function lastLook<T>(check: () => T | Promise<T>): Promise<T> {
  await new Promise((r) => setImmediate(r));
  return check();
}
