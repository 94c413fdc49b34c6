// A stranger's first call: createBackend with a URL where nothing listens.
// The backend is made (no I/O yet), and its first call fails with
// ConnectionError COORD_ERR_REDIS_UNREACHABLE naming the address, instead of
// being held by the client library while it retries forever. (A backend that
// has reached Redis once still waits through a lost connection: the
// adapter and restart tests hold that.) The 20 s bound is a hang guard only.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { ConnectionError } from '../entries/plugin.ts';
import { freePort } from './support/redis.ts';

const HANG_GUARD_MS = 20_000;

function settles<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown } | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HANG_GUARD_MS);
  });
  const outcome = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return Promise.race([outcome, guard]).finally(() => clearTimeout(timer));
}

for (const adapter of ['ioredis', 'node-redis'] as const) {
  t.test(`${adapter}: nothing listening → the first call is ConnectionError naming the address`, async (t) => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const backend = await createBackend({ adapter, url });
    t.teardown(() => backend.close());
    for (const [what, call] of [
      ['send', () => backend.send(['PING'])],
      ['multi', () => backend.multi([['SET', 'k', 'v']])],
      ['ready', () => backend.ready()],
    ] as const) {
      const outcome = await settles<unknown>(call());
      t.not(outcome, 'hung', `${what} settles`);
      if (outcome === 'hung') continue;
      const error = outcome.error as ConnectionError;
      t.ok(error instanceof ConnectionError, `${what}: ConnectionError`);
      t.equal(error.code, 'COORD_ERR_REDIS_UNREACHABLE', `${what}: its code`);
      t.match(error.message, new RegExp(`^cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: `), `${what}: names the address`);
    }
  });
}
