// Bounded Redis calls. The adapters queue commands while Redis is away (they
// wait for the reconnect rather than fail), which is right for workers but
// would leave a connecting client hanging: the proxy gives each call a
// deadline, and a call that completes after its caller gave up is undone by
// `late`, so nothing stays counted for a client that already got its answer.

export class RedisTimeout extends Error {
  override readonly name = 'RedisTimeout';
}

/** How long a proxy waits for one Redis call before it answers the client 503. */
export const REDIS_CALL_MS = 3000;

export function withDeadline<T>(call: Promise<T>, ms: number, late?: (value: T) => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let expired = false;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      expired = true;
      reject(new RedisTimeout(`Redis did not answer within ${ms} ms`));
    }, ms);
  });
  call.then(
    (value) => {
      if (expired) late?.(value);
    },
    () => {},
  );
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}
