// The everyday commands plugins use on strings, hashes, sets, sorted sets and lists.
import type { SuiteTest } from '../suite-test.ts';
import { pairs, sorted, type SuiteContext } from './support.ts';

export async function dataTypeTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('strings and keys: SET NX EX, INCR, DEL, EXISTS, EXPIRE, MGET', (t) =>
    ctx.use('keys', async (b) => {
      const k = (name: string) => ctx.key('keys', name);
      t.equal(await b.send(['SET', k('lock'), 'me', 'NX', 'EX', 60]), 'OK', 'SET NX EX on a free key → OK');
      t.equal(await b.send(['SET', k('lock'), 'you', 'NX', 'EX', 60]), null, 'SET NX EX on a taken key → null');
      t.equal(await b.send(['GET', k('lock')]), 'me', 'the first holder keeps it');
      t.equal(await b.send(['SET', k('lock'), 'x', 'XX']), 'OK', 'SET XX on an existing key');
      t.equal(await b.send(['SET', k('nolock'), 'x', 'XX']), null, 'SET XX on a missing key → null');
      t.equal(await b.send(['INCR', k('n')]), 1, 'INCR of a missing key → 1');
      t.equal(await b.send(['INCRBY', k('n'), 10]), 11);
      t.equal(await b.send(['DECR', k('n')]), 10);
      await b.send(['RPUSH', k('list'), 'a']);
      t.same(await b.send(['MGET', k('n'), k('missing'), k('lock'), k('list')]), ['10', null, 'x', null], 'MGET: nil for missing keys and keys of other types');
      t.equal(await b.send(['EXISTS', k('n'), k('lock'), k('missing')]), 2, 'EXISTS counts the existing keys');
      await b.send(['DEL', k('list')]);
      t.equal(await b.send(['EXPIRE', k('n'), 60]), 1);
      t.equal(await b.send(['EXPIRE', k('missing'), 60]), 0);
      t.equal(await b.send(['DEL', k('n'), k('lock'), k('missing')]), 2, 'DEL counts the removed keys');
      t.equal(await b.send(['EXISTS', k('n')]), 0);
    }),
  );

  await t.test('hashes: HSET, HGET, HINCRBY, HSETNX, HDEL, HEXISTS, HLEN, HKEYS', (t) =>
    ctx.use('hashes', async (b) => {
      const h = ctx.key('hashes', 'h');
      t.equal(await b.send(['HSET', h, 'a', '1', 'b', '2']), 2);
      t.equal(await b.send(['HSET', h, 'a', '3']), 0, 'HSET of an existing field → 0');
      t.equal(await b.send(['HINCRBY', h, 'a', 5]), 8, 'HINCRBY → the new value');
      t.equal(await b.send(['HINCRBY', h, 'c', -2]), -2, 'HINCRBY of a missing field starts at 0');
      t.equal(await b.send(['HSETNX', h, 'd', 'x']), 1, 'HSETNX on a free field → 1');
      t.equal(await b.send(['HSETNX', h, 'd', 'y']), 0, 'HSETNX on a taken field → 0');
      t.equal(await b.send(['HGET', h, 'd']), 'x');
      t.equal(await b.send(['HEXISTS', h, 'd']), 1);
      t.equal(await b.send(['HDEL', h, 'd', 'nope']), 1, 'HDEL counts the removed fields');
      t.equal(await b.send(['HEXISTS', h, 'd']), 0);
      t.equal(await b.send(['HLEN', h]), 3);
      t.same(sorted(await b.send(['HKEYS', h])), ['a', 'b', 'c']);
      t.same(pairs(await b.send(['HGETALL', h])), [['a', '8'], ['b', '2'], ['c', '-2']]);
    }),
  );

  await t.test('sets: SADD, SREM, SISMEMBER, SMEMBERS, SCARD, SPOP, SMOVE', (t) =>
    ctx.use('sets', async (b) => {
      const s = ctx.key('sets', 's');
      const d = ctx.key('sets', 'd');
      t.equal(await b.send(['SADD', s, 'a', 'b', 'c', 'a']), 3, 'SADD counts new members');
      t.equal(await b.send(['SISMEMBER', s, 'b']), 1);
      t.equal(await b.send(['SISMEMBER', s, 'z']), 0);
      t.equal(await b.send(['SREM', s, 'b', 'z']), 1, 'SREM counts removed members');
      t.same(sorted(await b.send(['SMEMBERS', s])), ['a', 'c']);
      t.equal(await b.send(['SMOVE', s, d, 'a']), 1, 'SMOVE of a member → 1');
      t.equal(await b.send(['SMOVE', s, d, 'a']), 0, 'SMOVE of a non-member → 0');
      t.same(await b.send(['SMEMBERS', d]), ['a']);
      t.equal(await b.send(['SCARD', s]), 1);
      t.equal(await b.send(['SPOP', s]), 'c', 'SPOP → the member');
      t.equal(await b.send(['SPOP', s]), null, 'SPOP of an empty set → null');
      t.equal(await b.send(['EXISTS', s]), 0, 'an emptied set is removed');
      t.same(await b.send(['SMEMBERS', s]), [], 'SMEMBERS of a missing set → []');
    }),
  );

  await t.test('sorted sets: ZADD, ZRANGE (BYSCORE, WITHSCORES), ZRANGEBYSCORE LIMIT, ZINCRBY, ZREM, ZSCORE', (t) =>
    ctx.use('zsets', async (b) => {
      const z = ctx.key('zsets', 'z');
      t.equal(await b.send(['ZADD', z, 1, 'a', 2, 'b', 3, 'c', 4, 'd']), 4);
      t.equal(await b.send(['ZADD', z, 5, 'a']), 0, 'ZADD of an existing member → 0 (score updated)');
      t.same(await b.send(['ZRANGE', z, 0, -1]), ['b', 'c', 'd', 'a'], 'ZRANGE by rank, ascending score');
      t.same(await b.send(['ZRANGE', z, 0, 1, 'WITHSCORES']), ['b', '2', 'c', '3'], 'WITHSCORES → member, score (strings)');
      t.same(await b.send(['ZRANGE', z, 2, 4, 'BYSCORE']), ['b', 'c', 'd'], 'ZRANGE … BYSCORE');
      t.same(await b.send(['ZRANGE', z, '(2', '+inf', 'BYSCORE', 'LIMIT', 0, 2]), ['c', 'd'], 'exclusive bound and LIMIT');
      t.same(await b.send(['ZRANGEBYSCORE', z, '-inf', '+inf', 'LIMIT', 1, 2]), ['c', 'd'], 'ZRANGEBYSCORE LIMIT offset count');
      t.same(await b.send(['ZRANGEBYSCORE', z, '-inf', '+inf', 'withscores', 'limit', 0, 1]), ['b', '2'], 'options in lower case');
      t.equal(await b.send(['ZINCRBY', z, 1.5, 'b']), '3.5', 'ZINCRBY → the new score as a string');
      t.equal(await b.send(['ZSCORE', z, 'b']), '3.5');
      t.equal(await b.send(['ZSCORE', z, 'nope']), null);
      t.equal(await b.send(['ZREM', z, 'c', 'nope']), 1, 'ZREM counts removed members');
      t.equal(await b.send(['ZCARD', z]), 3);
      t.same(await b.send(['ZRANGE', z, 0, -1]), ['b', 'd', 'a']);
    }),
  );

  await t.test('lists: LPUSH, RPUSH, LRANGE, LREM, LMOVE, RPOPLPUSH, LPOP, RPOP, LLEN', (t) =>
    ctx.use('lists', async (b) => {
      const l = ctx.key('lists', 'l');
      const d = ctx.key('lists', 'd');
      t.equal(await b.send(['RPUSH', l, 'a', 'b', 'x']), 3, 'RPUSH → the new length');
      t.equal(await b.send(['LPUSH', l, 'x', 'y']), 5, 'LPUSH → the new length');
      t.same(await b.send(['LRANGE', l, 0, -1]), ['y', 'x', 'a', 'b', 'x'], 'LPUSH pushes one at a time to the head');
      t.same(await b.send(['LRANGE', l, 1, 2]), ['x', 'a']);
      t.equal(await b.send(['LREM', l, 0, 'x']), 2, 'LREM 0 removes every match');
      t.same(await b.send(['LRANGE', l, 0, -1]), ['y', 'a', 'b']);
      t.equal(await b.send(['LMOVE', l, d, 'LEFT', 'RIGHT']), 'y', 'LMOVE → the element moved');
      t.equal(await b.send(['RPOPLPUSH', l, d]), 'b', 'RPOPLPUSH → the element moved');
      t.same(await b.send(['LRANGE', d, 0, -1]), ['b', 'y']);
      t.equal(await b.send(['LMOVE', ctx.key('lists', 'none'), d, 'LEFT', 'RIGHT']), null, 'LMOVE from an empty list → null');
      t.equal(await b.send(['LLEN', d]), 2);
      t.equal(await b.send(['LPOP', d]), 'b');
      t.equal(await b.send(['RPOP', d]), 'y');
      t.equal(await b.send(['LPOP', d]), null, 'LPOP of an empty list → null');
      t.equal(await b.send(['EXISTS', d]), 0, 'an emptied list is removed');
    }),
  );
}
