// Redis gone after the backend reached it: every kind of call is held for the
// reconnect (none fails by itself within 2 s), and close() rejects each one at
// once with ConnectionError COORD_ERR_BACKEND_CLOSED — also those the client
// library would hold on a connection it has ended (node-redis's (un)subscribe,
// ioredis's SCAN stream). A process stopping with Redis gone relies on it
// (core/stop-without-redis.ts).
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend, BlockingConnection, Subscriber } from '../core/backend.ts';
import { ConnectionError } from '../entries/plugin.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop(true));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Outcome = 'pending' | 'resolved' | Error;

/** A subscriber (with a channel and a pattern) and a blocking connection, made while Redis is up. */
async function connections(backend: Backend): Promise<{ sub: Subscriber; blocking: BlockingConnection }> {
  const sub = await backend.subscriber();
  await sub.subscribe('held:c');
  await sub.psubscribe('held:p*');
  return { sub, blocking: await backend.blocking() };
}

/** Every kind of call a role makes, started now; their outcomes as they settle. */
function callsOn(backend: Backend, { sub, blocking }: { sub: Subscriber; blocking: BlockingConnection }): Record<string, Outcome> {
  const script = { name: 'test/one', lua: 'return 1', sha: 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db' };
  const calls: Record<string, () => Promise<unknown>> = {
    send: () => backend.send(['GET', 'held:k']),
    evalScript: () => backend.evalScript(script, [], []),
    multi: () => backend.multi([['SET', 'held:k', '1'], ['GET', 'held:k']]),
    pipeline: () => backend.pipeline([['SET', 'held:k', '1'], ['GET', 'held:k']]),
    scan: async () => {
      for await (const key of backend.scan('held:*')) void key;
    },
    subscribe: () => sub.subscribe('held:d'),
    unsubscribe: () => sub.unsubscribe('held:c'),
    punsubscribe: () => sub.punsubscribe(),
    blocking: () => blocking.send(['BLPOP', 'held:list', 1]),
  };
  const outcomes: Record<string, Outcome> = {};
  for (const [name, call] of Object.entries(calls)) {
    outcomes[name] = 'pending';
    Promise.resolve()
      .then(call)
      .then(
        () => (outcomes[name] = 'resolved'),
        (error: Error) => (outcomes[name] = error),
      );
  }
  return outcomes;
}

t.test('calls held through an outage are rejected by close(), at once, with ConnectionError', async (t) => {
  const backends = await Promise.all(
    (['ioredis', 'node-redis'] as const).map(async (adapter) => {
      const backend = await createBackend({ adapter, url: redis.url });
      await backend.ready();
      return { adapter, backend, open: await connections(backend) };
    }),
  );
  await redis.down();
  await sleep(500);
  const started = backends.map((b) => ({ ...b, outcomes: callsOn(b.backend, b.open) }));
  await sleep(2000);
  for (const { adapter, outcomes } of started) {
    const settled = Object.entries(outcomes).filter(([, o]) => o !== 'pending').map(([name, o]) => `${name}: ${o instanceof Error ? o.message : o}`);
    t.same(settled, [], `${adapter}: every call is held for the reconnect`);
  }
  for (const { adapter, backend, outcomes } of started) {
    const at = Date.now();
    await backend.close();
    await sleep(200);
    t.ok(Date.now() - at < 2000, `${adapter}: close() returned in ${Date.now() - at} ms`);
    t.equal(Object.keys(outcomes).length, 9, `${adapter}: nine kinds of call`);
    for (const [name, outcome] of Object.entries(outcomes)) {
      t.ok(outcome instanceof ConnectionError, `${adapter}: ${name} rejected with ConnectionError (${outcome instanceof Error ? outcome.message : outcome})`);
      t.equal((outcome as ConnectionError).code, 'COORD_ERR_BACKEND_CLOSED', `${adapter}: ${name}: COORD_ERR_BACKEND_CLOSED`);
    }
  }
});
