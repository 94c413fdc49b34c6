// The embedded backend's Lua (5.4 in WebAssembly) held to a real redis-server's
// (5.1): the same scripts, the same replies, or errors with the same code. Covers
// how values cross between Lua and replies, 64-bit integers, and the libraries
// Redis gives scripts (cjson, bit, unpack, redis.*).
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { ReplyError, type Arg, type Backend } from '../core/backend.ts';
import { createEmbeddedBackend } from '../adapters/embedded.ts';
import { createIoredisBackend } from '../adapters/ioredis.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
const real = createIoredisBackend({ url: redis.url });
const embedded = createEmbeddedBackend({ url: `embedded://lua-${randomUUID().slice(0, 8)}` });
t.teardown(async () => {
  await real.close();
  await embedded.close();
});

async function outcome(backend: Backend, lua: string, keys: string[], args: Arg[]): Promise<unknown> {
  try {
    return await backend.send(['EVAL', lua, keys.length, ...keys, ...args]);
  } catch (error) {
    if (error instanceof ReplyError) return `error ${error.message.split(' ')[0]}`;
    throw error;
  }
}

async function same(t: Test, lua: string, keys: string[] = [], args: Arg[] = []): Promise<void> {
  const want = await outcome(real, lua, keys, args);
  t.same(await outcome(embedded, lua, keys, args), want, `${lua} → ${JSON.stringify(want)}`);
}

t.test('numbers cross as Redis sends them, with 64-bit integers', async (t) => {
  await same(t, 'return 3.0');
  await same(t, 'return 3.7');
  await same(t, 'return -3.7');
  await same(t, 'return 10 / 2');
  await same(t, 'return tonumber(ARGV[1]) * 1000', [], ['1732600000']);
  await same(t, 'return math.floor(tonumber(ARGV[1]) / 1000)', [], ['1732600000123']);
  await same(t, 'return 2^40 + 1');
  await same(t, "return tonumber('9007199254740991')");
  await same(t, 'return tonumber(ARGV[1]) + 1', [], ['4000000000']);
  const k = `n:${randomUUID()}`;
  await same(t, "redis.call('SET', KEYS[1], 10 / 2); return redis.call('GET', KEYS[1])", [k]);
  await same(t, "redis.call('SET', KEYS[1], 1732600000 * 1000.0); return redis.call('INCRBY', KEYS[1], 1)", [k]);
  await same(t, "redis.call('SET', KEYS[1], 2.5); return redis.call('GET', KEYS[1])", [k]);
  await same(t, "return redis.call('INCRBY', KEYS[1], 5000000000)", [`big:${randomUUID()}`]);
  await same(t, "return string.format('%d', 2.5)");
  await same(t, "return string.format('%d items, %.2f each, %s', 3, 1.5, 'x')");
});

t.test('tables, booleans, nil and status or error tables become replies as on Redis', async (t) => {
  await same(t, "return {1, 2.5, 'x', true, false, 7}");
  await same(t, "return {1, 2, nil, 4}");
  await same(t, 'return {{1, {2, 3}}, {}}');
  await same(t, 'return true');
  await same(t, 'return false');
  await same(t, 'return nil');
  await same(t, "return {name = 'ignored'}");
  await same(t, "return {err = 'MYCODE went wrong'}");
  await same(t, "return redis.error_reply('MYCODE went wrong')");
  await same(t, "return redis.status_reply('FINE')");
  await same(t, "return redis.call('SET', KEYS[1], 'v')", [`s:${randomUUID()}`]);
  await same(t, "return redis.call('GET', KEYS[1])", [`none:${randomUUID()}`]);
  await same(t, "return type(redis.call('GET', KEYS[1]))", [`none:${randomUUID()}`]);
});

t.test('errors: redis.call raises, redis.pcall returns them, both keep the code', async (t) => {
  const k = `e:${randomUUID()}`;
  await real.send(['SET', k, 'text']);
  await embedded.send(['SET', k, 'text']);
  await same(t, "return redis.call('INCR', KEYS[1])", [k]);
  await same(t, "return redis.call('HGET', KEYS[1], 'f')", [k]);
  await same(t, "local r = redis.pcall('INCR', KEYS[1]); return type(r) == 'table' and r.err ~= nil", [k]);
  await same(t, "local ok = pcall(redis.call, 'LPUSH', KEYS[1], 'x'); return ok", [k]);
  await same(t, "return redis.call('NOSUCHCOMMAND')");
  await same(t, 'return undefined_global_name');
  await same(t, 'x = 1; return x');
  await same(t, "error('plain')");
  await same(t, "error({err = 'CUSTOM raised as a table'})");
  await same(t, 'return (');
});

t.test('the libraries Redis gives scripts', async (t) => {
  await same(t, "return cjson.encode({1, 2, 'three'})");
  await same(t, "return cjson.encode({a = 1})");
  await same(t, "return cjson.decode('[10, 20, 30]')[2]");
  await same(t, "return cjson.decode('{\"a\": {\"b\": \"deep\"}}').a.b");
  await same(t, "return cjson.decode('[1.5]')[1] * 2");
  await same(t, 'return bit.band(0xff, 0x0f)');
  await same(t, 'return bit.bor(1, 2, 4)');
  await same(t, 'return bit.bxor(5, 3)');
  await same(t, 'return bit.bnot(0)');
  await same(t, 'return bit.lshift(1, 31)');
  await same(t, 'return bit.rshift(-1, 28)');
  await same(t, 'return bit.arshift(-256, 4)');
  await same(t, 'return bit.tobit(2^32 + 5)');
  await same(t, 'return bit.tohex(255)');
  await same(t, 'return bit.tohex(-1, -4)');
  await same(t, 'return bit.rol(0x80000001, 1)');
  await same(t, 'return bit.bswap(0x01020304)');
  await same(t, "return select('#', unpack({1, 2, 3}))");
  await same(t, 'return table.getn({1, 2, 3})');
  await same(t, 'return math.pow(2, 10)');
  await same(t, "return redis.sha1hex('abc')");
  await same(t, "return string.rep('ab', 3)");
  await same(t, "local s = ''; for w in string.gmatch('a,b,,c', '[^,]+') do s = s .. w end; return s");
});

t.test('KEYS and ARGV carry any text, UTF-8 included, both ways', async (t) => {
  await same(t, 'return {KEYS[1], ARGV[1], ARGV[2], #ARGV}', ['ключ'], ['värde', '']);
  await same(t, 'return string.len(ARGV[1])', [], ['日本']);
  const k = `u:${randomUUID()}`;
  await same(t, "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])", [k], ['ünïcödé ✓']);
  await same(t, 'return ARGV[1]', [], ['x'.repeat(100_000)]);
});
