// The Sentinel tests both Redis client adapters must pass, against a real
// master, replica and three sentinels (test/support/redis-ha.ts): the
// conformance suite through a redis+sentinel:// URL, the config form with
// the sentinels' own password, a failover followed by commands, a subscriber
// and a blocking connection, and one clear line for a wrong master name or
// unreachable sentinels.
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { connectBackend } from '../../adapters/index.ts';
import { adapterSuite } from '../../conformance/adapter-suite.ts';
import { ConnectionError, type BackendFactory, type PubSubMessage } from '../../core/backend.ts';
import { loadConfig } from '../../core/config.ts';
import { freePort } from './redis.ts';
import { startSentinels, type SentinelSet } from './redis-ha.ts';
import { until } from './until.ts';

const DATA_PASSWORD = 'data-pw';
const SENTINEL_PASSWORD = 'sentinel-pw';

export async function sentinelCases(t: Test, adapter: { name: 'ioredis' | 'node-redis'; create: BackendFactory }): Promise<void> {
  // No failover until the last case asks for one: a loaded CI machine stalled 2 s once and the
  // sentinels failed the master over mid-suite, losing a message published across the switch.
  const set = await startSentinels({ password: DATA_PASSWORD, sentinelPassword: SENTINEL_PASSWORD, downAfterMs: 600_000 });
  t.teardown(() => set.stop());
  const sentinel = { password: SENTINEL_PASSWORD };

  await t.test('conformance suite through redis+sentinel://', (t) =>
    adapterSuite(t, { name: `${adapter.name} (sentinel)`, make: () => adapter.create({ url: set.url, sentinel }) }),
  );
  await t.test("config form: redis.sentinels, redis.masterName and the sentinels' own password", (t) => configForm(t, adapter.name, set));
  await t.test('a wrong master name or unreachable sentinels: ready() rejects with one line', (t) => unreachable(t, adapter, set));
  // Last: the failover kills the master for good.
  set.downAfter(2000);
  await t.test('a failover is followed: commands, a subscriber and a blocking connection work again', (t) => failover(t, adapter, set));
}

async function configForm(t: Test, adapter: string, set: SentinelSet): Promise<void> {
  const config = loadConfig({
    plugins: [],
    env: { COORD_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD },
    flags: [
      { path: 'redis.sentinels', value: set.sentinels.map((p) => `127.0.0.1:${p}`).join(',') },
      { path: 'redis.masterName', value: set.masterName },
      { path: 'redis.adapter', value: adapter },
    ],
  });
  // The data nodes' password goes in the URL the config form makes, as redis.passwordFile would put it.
  const url = config.redis.url!.replace('://', `://:${DATA_PASSWORD}@`);
  const backend = await connectBackend({ ...config.redis, url });
  t.teardown(() => backend.close());
  t.equal(backend.name, adapter);
  t.equal(await backend.send(['SET', `config-form:${randomUUID()}`, 'v']), 'OK', 'commands reach the master');
  t.match(await backend.send(['ROLE']), ['master'], 'the master, not a sentinel or the replica');

  const outcome = await settle(connectBackend({ adapter: config.redis.adapter, url }));
  t.ok(outcome.error instanceof ConnectionError, 'without the sentinels\' password there is no master');
  t.match(String((outcome.error as Error).message), /sentinel( \S+)?: NOAUTH .*check redis\.sentinelPassword/, `the line says a sentinel wants a password: ${(outcome.error as Error).message}`);
}

async function unreachable(t: Test, adapter: { create: BackendFactory }, set: SentinelSet): Promise<void> {
  const wrongName = set.url.replace(/\/[^/]+$/, '/nosuchmaster');
  const port = await freePort();
  const cases: [string, string, RegExp][] = [
    ['a master name the sentinels do not know', wrongName, /no master named "nosuchmaster" \(check the name/],
    ['no sentinel listening', `redis+sentinel://127.0.0.1:${port}/${set.masterName}`, new RegExp(`127\\.0\\.0\\.1:${port}.*(ECONNREFUSED|not reachable)`)],
  ];
  for (const [what, url, message] of cases) {
    const b = adapter.create({ url, sentinel: { password: SENTINEL_PASSWORD } });
    const started = Date.now();
    const outcome = await settle(b.ready());
    const error = outcome.error as Error;
    t.ok(error instanceof ConnectionError, `${what}: ConnectionError (${error?.message})`);
    t.match(error.message, /^cannot reach Redis at redis\+sentinel:\/\//, `${what}: the line names the URL`);
    t.match(error.message, message, `${what}: and why`);
    t.notMatch(error.message, /\n/, `${what}: one line`);
    t.ok(Date.now() - started < 20_000, `${what}: within 20 s (${Date.now() - started} ms)`);
    await b.close();
  }
}

async function failover(t: Test, adapter: { name: string; create: BackendFactory }, set: SentinelSet): Promise<void> {
  const b = adapter.create({ url: set.url, sentinel: { password: SENTINEL_PASSWORD } });
  t.teardown(() => b.close());
  await b.ready();
  const channel = `failover:${randomUUID()}`;
  const heard: PubSubMessage[] = [];
  const sub = await b.subscriber();
  sub.onMessage((m) => heard.push(m));
  await sub.subscribe(channel);
  await sub.psubscribe(`${channel}:*`);
  const blocking = await b.blocking();
  const list = `failover-list:${randomUUID()}`;
  await b.send(['RPUSH', list, 'before']);
  t.same(await blocking.send(['BLPOP', list, 1]), [list, 'before'], 'the blocking connection works before the failover');

  // A send loop, as a role's heartbeat: each command waits for its reply, errors are counted, not thrown.
  const successes: number[] = [];
  let errors = 0;
  let lastError = '';
  let running = true;
  t.teardown(() => {
    running = false;
  });
  const counter = `failover-count:${randomUUID()}`;
  const loop = (async () => {
    while (running) {
      try {
        await b.send(['INCR', counter]);
        successes.push(Date.now());
      } catch (error) {
        errors++;
        lastError = String(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  await until('the send loop running', () => successes.length >= 3, 10_000, 20);

  const done = await set.failover();
  const firstAfter = await until(
    'a command succeeding after the promotion',
    () => successes.find((at) => at >= done.promotedAt),
    30_000,
    20,
  ).catch((error: Error) => {
    throw new Error(`${error.message} (${errors} errors, the last: ${lastError || 'none'}; ${successes.length} successes)`);
  });
  const ms = firstAfter - done.promotedAt;
  t.comment(`${adapter.name}: master ${done.killedPort} killed, ${done.promotedPort} promoted ${done.promotedAt - done.killedAt} ms later; first command after it ${ms} ms after the promotion (${errors} errors meanwhile)`);
  t.ok(ms < 10_000, `commands succeed again within 10 s of the promotion (${ms} ms)`);
  running = false;
  await loop;
  t.match(await b.send(['ROLE']), ['master'], 'on the promoted master');
  t.equal(Number(await b.send(['INFO', 'server']).then((info) => /tcp_port:(\d+)/.exec(String(info))?.[1])), done.promotedPort, 'which is the replica the sentinels promoted');

  // A message sent before the subscriber has moved would be lost: publish until it is heard.
  await until('the subscriber hearing a message published after the failover', async () => {
    await b.send(['PUBLISH', channel, 'after']);
    await b.send(['PUBLISH', `${channel}:p`, 'after-pattern']);
    return heard.some((m) => m.message === 'after') && heard.some((m) => m.message === 'after-pattern');
  }, 20_000, 250);
  t.ok(heard.some((m) => m.channel === channel && m.message === 'after' && m.pattern === undefined), 'the channel subscription survived');
  t.ok(heard.some((m) => m.pattern === `${channel}:*` && m.message === 'after-pattern'), 'the pattern subscription survived');

  await b.send(['RPUSH', list, 'after']);
  t.same(await blocking.send(['BLPOP', list, 5]), [list, 'after'], 'the blocking connection works after the failover');
  const keys: string[] = [];
  for await (const key of b.scan(`${counter}*`)) keys.push(key);
  t.same(keys, [counter], 'SCAN reaches the promoted master');
  await sub.close();
  await blocking.close();
}

async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}
