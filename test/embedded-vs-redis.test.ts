// The embedded backend's own sorted-set ranges, stream reads and its non-copying key space,
// held to a real redis-server: the same commands on both, the same replies
// (and the same errors, by code). Reads must not change what they read.
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { ReplyError, type Backend, type Command } from '../core/backend.ts';
import { createEmbeddedBackend } from '../adapters/embedded.ts';
import { createIoredisBackend } from '../adapters/ioredis.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
const real = createIoredisBackend({ url: redis.url });
const embedded = createEmbeddedBackend({ url: `embedded://vs-redis-${randomUUID().slice(0, 8)}` });
t.teardown(async () => {
  await real.close();
  await embedded.close();
});

async function outcome(backend: Backend, command: Command): Promise<unknown> {
  try {
    return await backend.send(command);
  } catch (error) {
    if (error instanceof ReplyError) return `error ${error.message.split(' ')[0]}`;
    throw error;
  }
}

/** Runs each command on both backends and compares every reply. */
async function same(t: Test, commands: Command[]): Promise<void> {
  for (const command of commands) {
    t.same(await outcome(embedded, command), await outcome(real, command), JSON.stringify(command));
  }
}

t.test('ZRANGE and its relatives over a sorted set with ties, negative and infinite scores', async (t) => {
  const z = `z:${randomUUID()}`;
  const setup: Command[] = [
    ['ZADD', z, 5, 'e', 1, 'a', 3, 'c', 3, 'b', -2, 'neg', 1.5, 'half', 3, 'd', 10, 'ten', '+inf', 'top', '-inf', 'bottom'],
  ];
  await same(t, setup);
  const reads: Command[] = [
    ['ZRANGE', z, 0, -1], ['ZRANGE', z, 0, -1, 'WITHSCORES'], ['ZRANGE', z, 2, 4], ['ZRANGE', z, -3, -1], ['ZRANGE', z, 5, 2],
    ['ZRANGE', z, -100, 100], ['ZRANGE', z, 0, 0], ['ZRANGE', z, 20, 30], ['ZRANGE', z, 0, -1, 'REV'], ['ZRANGE', z, 1, 3, 'REV', 'WITHSCORES'],
    ['ZRANGE', z, 1, 3, 'BYSCORE'], ['ZRANGE', z, '(1', 3, 'BYSCORE'], ['ZRANGE', z, 1, '(3', 'BYSCORE', 'WITHSCORES'],
    ['ZRANGE', z, '-inf', '+inf', 'BYSCORE', 'LIMIT', 2, 3], ['ZRANGE', z, '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 1, 2],
    ['ZRANGE', z, 10, 1, 'BYSCORE', 'REV'], ['ZRANGE', z, 1, 10, 'BYSCORE', 'LIMIT', 0, -1], ['ZRANGE', z, 1, 10, 'BYSCORE', 'LIMIT', -1, 2],
    ['ZRANGE', z, 0, -1, 'LIMIT', 0, 1], ['ZRANGE', z, 'x', 1], ['ZRANGE', z, 'x', 1, 'BYSCORE'], ['ZRANGE', z, 0, 1, 'BOGUS'],
    ['ZREVRANGE', z, 0, 2], ['ZREVRANGE', z, 0, -1, 'WITHSCORES'], ['ZREVRANGE', z, -2, -1],
    ['ZRANGEBYSCORE', z, 1, 3], ['ZRANGEBYSCORE', z, '(1.5', '+inf', 'WITHSCORES', 'LIMIT', 1, 2], ['ZRANGEBYSCORE', z, 1.5, 1.5],
    ['ZRANGEBYSCORE', z, 3, 1], ['ZRANGEBYSCORE', z, 'a', 1],
    ['ZREVRANGEBYSCORE', z, '+inf', '-inf'], ['ZREVRANGEBYSCORE', z, 3, '(1', 'LIMIT', 0, 16], ['ZREVRANGEBYSCORE', z, '(3', 1, 'WITHSCORES'],
    ['ZCOUNT', z, '-inf', '+inf'], ['ZCOUNT', z, '(1', 3], ['ZCOUNT', z, 4, 2], ['ZCOUNT', z, 'x', 2],
    ['ZRANK', z, 'c'], ['ZRANK', z, 'bottom'], ['ZRANK', z, 'nobody'], ['ZREVRANK', z, 'c'], ['ZREVRANK', z, 'top'],
    ['ZCARD', z], ['ZSCORE', z, 'half'],
  ];
  await same(t, reads);
  await same(t, [['ZRANGE', z, 0, -1, 'WITHSCORES']]); // the reads changed nothing
});

t.test('ZRANGEBYLEX and ZREVRANGEBYLEX over members of one score', async (t) => {
  const z = `lex:${randomUUID()}`;
  await same(t, [
    ['ZADD', z, 0, 'apple', 0, 'banana', 0, 'cherry', 0, 'date', 0, 'fig'],
    ['ZRANGEBYLEX', z, '-', '+'], ['ZRANGEBYLEX', z, '[banana', '(date'], ['ZRANGEBYLEX', z, '(banana', '[fig', 'LIMIT', 1, 2],
    ['ZREVRANGEBYLEX', z, '+', '-'], ['ZREVRANGEBYLEX', z, '[date', '-', 'LIMIT', 0, 2], ['ZRANGE', z, '[b', '[d', 'BYLEX'],
    ['ZRANGEBYLEX', z, 'banana', '+'], ['ZRANGE', z, '-', '+', 'BYLEX', 'WITHSCORES'],
  ]);
});

t.test('a sorted set stays in order through updates, removals, increments and pops', async (t) => {
  const z = `moves:${randomUUID()}`;
  const commands: Command[] = [];
  for (let i = 0; i < 60; i++) commands.push(['ZADD', z, (i * 37) % 11, `m${i}`]);
  commands.push(
    ['ZADD', z, 100, 'm3', -5, 'm7'], ['ZADD', z, 'XX', 'CH', 4, 'm8', 4, 'nobody'], ['ZADD', z, 'NX', 0, 'm9', 0, 'new'],
    ['ZINCRBY', z, 2.5, 'm10'], ['ZREM', z, 'm11', 'm12', 'absent'], ['ZPOPMIN', z], ['ZPOPMAX', z, 2],
    ['ZREMRANGEBYRANK', z, 0, 2], ['ZRANGE', z, 0, -1, 'WITHSCORES'], ['ZRANK', z, 'm20'], ['ZCOUNT', z, 2, 6],
    ['ZADD', z, 'nan', 'x'], ['ZADD', z, 'one', 'x'], ['ZRANGE', z, 0, -1, 'WITHSCORES'],
  );
  await same(t, commands);
  const gone = `gone:${randomUUID()}`;
  await same(t, [['ZADD', gone, 1, 'only'], ['ZREM', gone, 'only'], ['EXISTS', gone], ['ZRANGE', gone, 0, -1], ['SET', gone, 'text'], ['ZRANGE', gone, 0, -1]]);
});

t.test('reads of hashes, sets and lists return what they hold and change nothing', async (t) => {
  const id = randomUUID();
  const [h, s, l] = [`h:${id}`, `s:${id}`, `l:${id}`];
  await same(t, [
    ['HSET', h, 'a', '1', 'b', '2', 'c', '3'], ['HGETALL', h], ['HMGET', h, 'a', 'zz', 'c'], ['HKEYS', h], ['HVALS', h], ['HLEN', h],
    ['HINCRBY', h, 'a', 5], ['HGET', h, 'a'], ['HDEL', h, 'a', 'b', 'c'], ['EXISTS', h],
    ['SADD', s, 'x', 'y', 'z'], ['SISMEMBER', s, 'y'], ['SCARD', s], ['SREM', s, 'y'], ['SCARD', s], ['SMOVE', s, `${s}:2`, 'x'],
    ['SCARD', `${s}:2`], ['SREM', s, 'z'], ['EXISTS', s],
    ['RPUSH', l, 'a', 'b', 'c', 'b'], ['LRANGE', l, 0, -1], ['LRANGE', l, 1, 2], ['LREM', l, 0, 'b'], ['LRANGE', l, 0, -1], ['LPUSH', l, 'z'],
    ['LPOP', l], ['RPOP', l], ['LRANGE', l, 0, -1], ['LLEN', l], ['RPOP', l], ['EXISTS', l],
  ]);
  // SMEMBERS and HGETALL order may differ between the two: compare as sets, and check the reply is a copy.
  await embedded.send(['SADD', s, 'p', 'q']);
  const members = (await embedded.send(['SMEMBERS', s])) as string[];
  members.push('changed');
  t.same(((await embedded.send(['SMEMBERS', s])) as string[]).sort(), ['p', 'q'], 'changing a reply changes nothing stored');
  await embedded.send(['HSET', h, 'f', 'v']);
  const all = (await embedded.send(['HGETALL', h])) as string[];
  all[1] = 'changed';
  t.equal(await embedded.send(['HGET', h, 'f']), 'v');
});

t.test('stream ranges, reads and trims by id, as on Redis', async (t) => {
  const s = `st:${randomUUID()}`;
  const g = `gs:${randomUUID()}`;
  await same(t, [
    ['XADD', s, '1-1', 'f', 'a'], ['XADD', s, '1-2', 'f', 'b'], ['XADD', s, '2-0', 'f', 'c'], ['XADD', s, '5-3', 'f', 'd'], ['XADD', s, '7-0', 'f', 'e'],
    ['XRANGE', s, '-', '+'], ['XRANGE', s, '1-2', '5'], ['XRANGE', s, '(1-1', '+', 'COUNT', 2], ['XRANGE', s, '3', '4'], ['XRANGE', s, '8', '+'],
    ['XREVRANGE', s, '+', '-', 'COUNT', 2], ['XREVRANGE', s, '(5-3', '-'], ['XREVRANGE', s, '2', '1'],
    ['XREAD', 'COUNT', 2, 'STREAMS', s, '1-1'], ['XREAD', 'STREAMS', s, '0'], ['XREAD', 'STREAMS', s, '7-0'],
    ['XADD', s, 'MAXLEN', 3, '8-0', 'f', 'g'], ['XLEN', s], ['XRANGE', s, '-', '+'],
    ['XADD', s, 'MAXLEN', '~', 10, '9-0', 'f', 'h'], ['XLEN', s],
    ['XTRIM', s, 'MINID', '8'], ['XRANGE', s, '-', '+'], ['XTRIM', s, 'MINID', '1'], ['XTRIM', s, 'MAXLEN', 0], ['XLEN', s],
    ['XADD', g, '1-0', 'n', '1'], ['XADD', g, '2-0', 'n', '2'], ['XADD', g, '3-0', 'n', '3'], ['XGROUP', 'CREATE', g, 'workers', '0'],
    ['XREADGROUP', 'GROUP', 'workers', 'c1', 'COUNT', 2, 'STREAMS', g, '>'], ['XREADGROUP', 'GROUP', 'workers', 'c2', 'STREAMS', g, '>'],
    ['XREADGROUP', 'GROUP', 'workers', 'c2', 'STREAMS', g, '>'], ['XACK', g, 'workers', '1-0', '3-0'],
  ]);
});

t.test('a key past its expiry is gone for every read', async (t) => {
  const k = `exp:${randomUUID()}`;
  await embedded.send(['HSET', k, 'f', 'v']);
  await embedded.send(['PEXPIRE', k, 30]);
  t.equal(await embedded.send(['HGET', k, 'f']), 'v');
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.equal(await embedded.send(['HGET', k, 'f']), null);
  t.equal(await embedded.send(['EXISTS', k]), 0);
  t.same(await embedded.send(['KEYS', `exp:*`]), []);
});
