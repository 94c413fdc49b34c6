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

  await t.test('HSCAN and SSCAN return every entry that lives through the scan, while a script moves out what each page found', (t) =>
    ctx.use('hscan', async (b) => {
      const hash = ctx.key('hscan', 'hash');
      const set = ctx.key('hscan', 'set');
      const names = Array.from({ length: 1000 }, (_, i) => `f${i}`);
      await b.pipeline([['HSET', hash, ...names.flatMap((n) => [n, `v-${n}`])], ['SADD', set, ...names]]);
      // each page's entries leave the key in the same script: the scan must not skip what the deletions shift
      const drain = `local page = redis.call(ARGV[2], KEYS[1], ARGV[1], 'COUNT', 50)
        local step = ARGV[2] == 'HSCAN' and 2 or 1
        for i = 1, #page[2], step do redis.call(ARGV[2] == 'HSCAN' and 'HDEL' or 'SREM', KEYS[1], page[2][i]) end
        return page`;
      for (const [command, key] of [['HSCAN', hash], ['SSCAN', set]] as const) {
        const seen: string[] = [];
        let cursor = '0';
        do {
          const [next, found] = (await b.send(['EVAL', drain, 1, key, cursor, command])) as [string, string[]];
          for (let i = 0; i < found.length; i += command === 'HSCAN' ? 2 : 1) seen.push(found[i]!);
          if (command === 'HSCAN') t.ok(found.every((v, i) => i % 2 === 0 || v === `v-${found[i - 1]}`), 'each field with its value');
          cursor = next;
        } while (cursor !== '0');
        t.equal(new Set(seen).size, 1000, `${command}: all 1000 entries found (${seen.length} returned)`);
        t.equal(await b.send(['EXISTS', key]), 0, `${command}: and moved out`);
      }
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
