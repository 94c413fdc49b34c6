// snapshotKeyspace on real backends: every type read whole with its TTL, only
// keys under the prefix, pipelined in batches, and keys that vanish or change
// type mid-read handled — on real Redis (standalone and cluster) and embedded.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend, Command } from '../core/backend.ts';
import { snapshotKeyspace, type KeySnapshot } from '../core/snapshot.ts';
import { startCluster, startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
const cluster = await startCluster();
t.teardown(() => cluster.stop());

const targets: { name: string; adapter: string; url?: string }[] = [
  { name: 'ioredis on Redis', adapter: 'ioredis', url: redis.url },
  { name: 'ioredis on Redis Cluster', adapter: 'ioredis', url: cluster.url },
  { name: 'node-redis on Redis', adapter: 'node-redis', url: redis.url },
  { name: 'embedded', adapter: 'embedded' },
];

let run = 0;
/** A fresh hash-tag prefix per test, so tests never see each other's keys. */
const freshPrefix = () => `{snap-${process.pid}-${++run}}:`;

/** The backend with some methods replaced (adapters keep private state, so no prototype tricks). */
function wrap(backend: Backend, overrides: Partial<Backend>): Backend {
  return {
    name: backend.name,
    capabilities: backend.capabilities,
    displayUrl: backend.displayUrl,
    ready: () => backend.ready(),
    send: (command) => backend.send(command),
    evalScript: (script, keys, args) => backend.evalScript(script, keys, args),
    multi: (commands) => backend.multi(commands),
    pipeline: (commands) => backend.pipeline(commands),
    scan: (pattern, count) => backend.scan(pattern, count),
    subscriber: () => backend.subscriber(),
    blocking: () => backend.blocking(),
    onState: (listener) => backend.onState(listener),
    close: () => backend.close(),
    ...overrides,
  };
}

/** A backend that counts round trips and can act between the two pipelines of a batch. */
function counting(backend: Backend, afterFirstPipeline?: () => Promise<void>) {
  const calls = { send: 0, pipeline: 0, commands: 0 };
  const wrapped = wrap(backend, {
    send: (command) => {
      calls.send++;
      return backend.send(command);
    },
    pipeline: async (commands) => {
      calls.pipeline++;
      calls.commands += commands.length;
      const result = await backend.pipeline(commands);
      if (calls.pipeline === 1) await afterFirstPipeline?.();
      return result;
    },
  });
  return { backend: wrapped, calls };
}

for (const target of targets) {
  t.test(target.name, async (t) => {
    const backend = await createBackend({ url: target.url, adapter: target.adapter });
    t.teardown(() => backend.close());
    await backend.ready();

    t.test('reads every type whole, with its TTL, and only keys under the prefix', async (t) => {
      const p = freshPrefix();
      await backend.send(['SET', `${p}str`, 'hello', 'EX', 100]);
      await backend.send(['HSET', `${p}hash`, 'a', '1', 'b', 'two']);
      await backend.send(['SADD', `${p}set`, 'y', 'x']);
      await backend.send(['ZADD', `${p}zset`, 2.5, 'b', 1, 'a']);
      await backend.send(['RPUSH', `${p}list`, 'first', 'second', 'first']);
      await backend.send(['XADD', `${p}stream`, '1-1', 'kind', 'start', 'n', '1']);
      await backend.send(['XADD', `${p}stream`, '2-1', 'kind', 'stop']);
      await backend.send(['PEXPIRE', `${p}hash`, 50_000]);
      await backend.send(['SET', 'outside:the:prefix', 'x']);
      t.teardown(() => backend.send(['DEL', 'outside:the:prefix']));

      const snap = await snapshotKeyspace(backend, { keyPrefix: p });
      const byKey = Object.fromEntries(snap.map((s) => [s.key.slice(p.length), s]));
      t.same(Object.keys(byKey), ['hash', 'list', 'set', 'str', 'stream', 'zset'], 'exactly the keys under the prefix, sorted');
      t.match(byKey.str, { type: 'string', value: 'hello' });
      t.ok(byKey.str!.ttlMs! > 95_000 && byKey.str!.ttlMs! <= 100_000, `a TTL in milliseconds (${byKey.str!.ttlMs})`);
      t.same(byKey.hash, { key: `${p}hash`, type: 'hash', value: { a: '1', b: 'two' }, ttlMs: byKey.hash!.ttlMs });
      t.ok(byKey.hash!.ttlMs! > 45_000 && byKey.hash!.ttlMs! <= 50_000, 'PEXPIRE shows');
      t.same(byKey.set, { key: `${p}set`, type: 'set', value: ['x', 'y'], ttlMs: null }, 'set members sorted; no TTL is null');
      t.same(byKey.zset, { key: `${p}zset`, type: 'zset', value: [{ member: 'a', score: 1 }, { member: 'b', score: 2.5 }], ttlMs: null });
      t.same(byKey.list, { key: `${p}list`, type: 'list', value: ['first', 'second', 'first'], ttlMs: null }, 'list items in order, duplicates kept');
      t.same(byKey.stream, {
        key: `${p}stream`,
        type: 'stream',
        value: [
          { id: '1-1', fields: { kind: 'start', n: '1' } },
          { id: '2-1', fields: { kind: 'stop' } },
        ],
        ttlMs: null,
      });
    });

    t.test('glob characters in the prefix are matched literally', async (t) => {
      const p = `{glob*${++run}}:`;
      await backend.send(['SET', `${p}k`, '1']);
      await backend.send(['SET', `{globX${run}}:k`, '2']);
      t.teardown(() => backend.send(['DEL', `{globX${run}}:k`]));
      t.same((await snapshotKeyspace(backend, { keyPrefix: p })).map((s) => s.key), [`${p}k`]);
    });

    t.test('keys are read in pipelined batches, not one round trip per key', async (t) => {
      const p = freshPrefix();
      const commands: Command[] = [];
      for (let i = 0; i < 1200; i++) commands.push(['HSET', `${p}h${String(i).padStart(4, '0')}`, 'f', i]);
      await backend.pipeline(commands);
      const { backend: counted, calls } = counting(backend);
      const snap = await snapshotKeyspace(counted, { keyPrefix: p, batchSize: 500 });
      t.equal(snap.length, 1200);
      t.same(snap[7], { key: `${p}h0007`, type: 'hash', value: { f: '7' }, ttlMs: null });
      t.equal(calls.send, 0, 'no single commands');
      t.equal(calls.pipeline, 6, '3 batches × (TYPE pipeline + value/PTTL pipeline)');
      t.equal(calls.commands, 1200 * 3, 'TYPE, HGETALL and PTTL once per key');
      await backend.pipeline(snap.map((s): Command => ['DEL', s.key]));
    });

    t.test('a key that vanishes between SCAN and the read is dropped', async (t) => {
      const p = freshPrefix();
      await backend.send(['SET', `${p}stays`, 'x']);
      await backend.send(['HSET', `${p}goes`, 'f', 'v']);
      await backend.send(['SET', `${p}gone-before-type`, 'x']);
      let deleted = false;
      const scanning = wrap(backend, {
        async *scan(pattern, count) {
          for await (const key of backend.scan(pattern, count)) yield key;
          await backend.send(['DEL', `${p}gone-before-type`]); // after SCAN, before TYPE
        },
      });
      const { backend: racing } = counting(scanning, async () => {
        deleted = (await backend.send(['DEL', `${p}goes`])) === 1; // after TYPE, before the read
      });
      const snap = await snapshotKeyspace(racing, { keyPrefix: p });
      t.ok(deleted, 'the hash was deleted between TYPE and the read');
      t.same(snap.map((s) => s.key), [`${p}stays`], 'both vanished keys are left out, without an error');
    });

    t.test('a key that changes type between TYPE and the read is read again', async (t) => {
      const p = freshPrefix();
      await backend.send(['SET', `${p}k`, 'text']);
      const { backend: racing, calls } = counting(backend, async () => {
        await backend.send(['DEL', `${p}k`]);
        await backend.send(['SADD', `${p}k`, 'm']);
      });
      const snap: KeySnapshot[] = await snapshotKeyspace(racing, { keyPrefix: p });
      t.same(snap, [{ key: `${p}k`, type: 'set', value: ['m'], ttlMs: null }], 'the key as it is now');
      t.equal(calls.pipeline, 4, 'one more TYPE + read round for that key');
    });

    t.test('an empty prefix snapshots everything, an empty keyspace is []', async (t) => {
      t.same(await snapshotKeyspace(backend, { keyPrefix: freshPrefix() }), []);
      const p = freshPrefix();
      await backend.send(['SET', `${p}one`, '1']);
      const all = await snapshotKeyspace(backend);
      t.ok(all.some((s) => s.key === `${p}one`), 'a key found without a prefix');
    });
  });
}

// Decoding Redis's 'inf' / '-inf' score text. On real Redis only: the embedded
// backend (ioredis-mock) stores ZADD +inf as NaN, an adapter matter.
t.test('infinite zset scores are numbers', async (t) => {
  const backend = await createBackend({ url: redis.url, adapter: 'ioredis' });
  t.teardown(() => backend.close());
  const p = freshPrefix();
  await backend.send(['ZADD', `${p}z`, '+inf', 'top', '-inf', 'bottom']);
  const [snap] = await snapshotKeyspace(backend, { keyPrefix: p });
  t.same(snap?.value, [{ member: 'bottom', score: -Infinity }, { member: 'top', score: Infinity }]);
});
