// SCAN completeness (every key once, nothing extra, no internal keys) and TYPE.
import type { SuiteTest } from '../suite-test.ts';
import type { Command } from '../../core/backend.ts';
import type { SuiteContext } from './support.ts';

export async function scanTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('scan returns every matching key exactly once and nothing else', (t) =>
    ctx.use('scan', async (b) => {
      const expected = new Set<string>();
      const writes: Command[] = [];
      for (let i = 0; i < 1000; i++) {
        const k = ctx.key('scan', 'k', String(i));
        expected.add(k);
        writes.push(['SET', k, i]);
      }
      const stream = ctx.key('scan', 'stream');
      const hash = ctx.key('scan', 'hash');
      expected.add(stream).add(hash);
      for (let i = 0; i < 3; i++) writes.push(['XADD', stream, '*', 'n', i]);
      writes.push(['HSET', hash, 'f', 'v']);
      writes.push(['SET', ctx.key('scanx', 'outside'), 'v']); // near, but not matching
      const results = await b.pipeline(writes);
      t.notOk(results.some((r) => r instanceof Error), 'the keys were written');

      for (const [pattern, count] of [[ctx.key('scan', '*'), 100], [`*${ctx.key('scan', '*')}`, 10], [ctx.key('scan', '*'), undefined]] as const) {
        const seen: string[] = [];
        for await (const key of b.scan(pattern, count)) seen.push(key);
        const unique = new Set(seen);
        t.equal(seen.length, unique.size, `${pattern} (COUNT ${count ?? 'default'}): no key twice`);
        t.same([...expected].filter((k) => !unique.has(k)), [], 'no key missing');
        t.same(seen.filter((k) => !expected.has(k)), [], 'no key extra (internal keys included)');
      }
      const few: string[] = [];
      for await (const key of b.scan(ctx.key('scan', 'k', '1??'))) few.push(key);
      t.same(few.sort(), Array.from({ length: 100 }, (_, i) => ctx.key('scan', 'k', String(100 + i))).sort(), '? matches one character');
      await b.send(['DEL', ctx.key('scanx', 'outside')]);
    }),
  );

  await t.test('TYPE names each data type', (t) =>
    ctx.use('type', async (b) => {
      const k = (name: string) => ctx.key('type', name);
      await b.pipeline([
        ['SET', k('string'), 'v'],
        ['RPUSH', k('list'), 'v'],
        ['HSET', k('hash'), 'f', 'v'],
        ['SADD', k('set'), 'v'],
        ['ZADD', k('zset'), 1, 'v'],
        ['XADD', k('stream'), '*', 'f', 'v'],
      ]);
      for (const type of ['string', 'list', 'hash', 'set', 'zset', 'stream']) t.equal(await b.send(['TYPE', k(type)]), type, `TYPE → ${type}`);
      t.equal(await b.send(['TYPE', k('missing')]), 'none', 'TYPE of a missing key → none');
    }),
  );
}
