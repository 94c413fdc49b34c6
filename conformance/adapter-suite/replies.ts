// Reply shapes (RESP2 normalised: string, number, null, nested arrays) and error replies.
import type { SuiteTest } from '../suite-test.ts';
import { pairs, rejectsWithCode, type SuiteContext } from './support.ts';

export async function replyTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('replies are normalised: strings, integers, nil, arrays', (t) =>
    ctx.use('replies', async (b) => {
      const k = ctx.key('replies', 'str');
      t.equal(await b.send(['PING']), 'PONG', 'status reply → string');
      t.equal(await b.send(['SET', k, 'v']), 'OK', 'SET → OK');
      t.equal(await b.send(['GET', k]), 'v', 'bulk reply → string');
      t.equal(await b.send(['GET', ctx.key('replies', 'missing')]), null, 'nil → null');
      t.equal(await b.send(['SET', k, 42]), 'OK');
      t.equal(await b.send(['GET', k]), '42', 'a number argument is sent as text; GET returns a string, not a number');
      t.equal(await b.send(['INCR', k]), 43, 'integer reply → number');
      t.equal(await b.send(['INCRBYFLOAT', k, '0.5']), '43.5', 'INCRBYFLOAT → bulk string');
      t.equal(await b.send(['SET', k, 1.5]), 'OK');
      t.equal(await b.send(['GET', k]), '1.5', 'a float argument is sent as its decimal text');

      const h = ctx.key('replies', 'hash');
      t.equal(await b.send(['HSET', h, 'a', '1', 'b', 2]), 2, 'HSET → number of new fields');
      const all = await b.send(['HGETALL', h]);
      t.ok(Array.isArray(all), 'HGETALL → a flat array');
      t.same(pairs(all), [['a', '1'], ['b', '2']], 'HGETALL holds field, value, field, value');
      t.same(await b.send(['HGETALL', ctx.key('replies', 'nohash')]), [], 'HGETALL of a missing key → []');
      t.same(await b.send(['HMGET', h, 'a', 'nope']), ['1', null], 'nil inside an array → null');
      t.same(await b.send(['LRANGE', ctx.key('replies', 'nolist'), 0, -1]), [], 'empty array → []');

      const s = ctx.key('replies', 'stream');
      t.equal(await b.send(['XADD', s, '1-1', 'f', 'v']), '1-1');
      t.equal(await b.send(['XADD', s, '2-1', 'g', 'w', 'h', 'x']), '2-1');
      t.same(
        await b.send(['XRANGE', s, '-', '+']),
        [['1-1', ['f', 'v']], ['2-1', ['g', 'w', 'h', 'x']]],
        'nested arrays keep their nesting',
      );
    }),
  );

  await t.test('error replies reject with ReplyError and its code', (t) =>
    ctx.use('errors', async (b) => {
      const k = ctx.key('errors', 'str');
      await b.send(['SET', k, 'abc']);
      await rejectsWithCode(t, b.send(['LPUSH', k, 'x']), 'WRONGTYPE', 'LPUSH on a string');
      await rejectsWithCode(t, b.send(['HGET', k, 'f']), 'WRONGTYPE', 'HGET on a string');
      await rejectsWithCode(t, b.send(['INCR', k]), 'ERR', 'INCR on a non-integer');
      await rejectsWithCode(t, b.send(['XADD', k, '*', 'f', 'v']), 'WRONGTYPE', 'XADD on a string');
      const s = ctx.key('errors', 'stream');
      await b.send(['XADD', s, '*', 'f', 'v']);
      await rejectsWithCode(t, b.send(['HSET', s, 'f', 'v']), 'WRONGTYPE', 'HSET on a stream');
      await rejectsWithCode(t, b.send(['LPUSH', s, 'x']), 'WRONGTYPE', 'LPUSH on a stream');
      await rejectsWithCode(t, b.send(['NOSUCHCOMMAND', k]), 'ERR', 'an unknown command');
      t.equal(await b.send(['GET', k]), 'abc', 'the connection still serves commands after error replies');
    }),
  );
}
