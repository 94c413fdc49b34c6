// A promise given a time limit. Redis clients hold commands while Redis fails
// over, pauses or is gone (they do not fail them), so a role that must act in
// time — a heartbeat, a stop, a /status answer — bounds its calls with this.

/**
 * The promise's value, or a rejection "[WHAT: ]no answer within N s" after
 * `ms`. A rejection of the promise after that is nobody's (it is swallowed).
 * Redis clients hold commands while Redis fails over or is gone, so a role
 * that must act in time (a heartbeat, a stop, a status answer) bounds its
 * calls with it.
 *
 * @example
 * const active = await withDeadline(ctx.backend.send(['SCARD', ctx.keys.jobs()]), 2000, 'counting jobs').catch(() => undefined);
 * if (active === undefined) ctx.logger.warn('Redis did not answer within 2 s');
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, what?: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what ? `${what}: ` : ''}no answer within ${Math.round(ms / 100) / 10} s`)), ms);
  });
  promise.catch(() => {});
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
