// Time, injected so tests can replace it. Roles never call Date.now() or setTimeout directly.

/**
 * Time as roles read it: the current time and a sleep that an abort signal
 * ends. A role uses `ctx.clock`, never Date.now() or setTimeout, so a test can
 * hand it a clock of its own.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The real clock: Date.now() and setTimeout. What the runtime gives roles
 * unless a test or an application registers another (under tokens.Clock); for
 * a context made by hand (roleContext) outside the runtime.
 *
 * @example
 * const started = systemClock.now();
 * await systemClock.sleep(1000, ctx.signal); // rejects with the signal's reason if the process stops first
 * ctx.logger.info('waited', { ms: systemClock.now() - started });
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
