// Lua scripts as plugins write them: EVALSHA with the EVAL fallback, KEYS/ARGV order,
// Redis's Lua→reply conversions, redis.error_reply / status_reply, and cjson.
import type { SuiteTest } from '../suite-test.ts';
import { rejectsWithCode, script, settled, type SuiteContext } from './support.ts';
import { ReplyError } from '../../core/backend.ts';

export async function scriptTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('evalScript runs a script never run before (EVALSHA → EVAL) and passes KEYS and ARGV in order', (t) =>
    ctx.use('eval', async (b) => {
      const order = script(ctx, 'order', 'return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], #KEYS, #ARGV, type(ARGV[2])}');
      const k1 = ctx.key('eval', 'k1');
      const k2 = ctx.key('eval', 'k2');
      const expected = [k1, k2, 'a', '7', '1.5', 2, 3, 'string'];
      t.same(await b.evalScript(order, [k1, k2], ['a', 7, 1.5]), expected, 'keys, then args, in order; numbers arrive as strings');
      t.same(await b.evalScript(order, [k1, k2], ['a', 7, 1.5]), expected, 'the second run (EVALSHA) gives the same');

      await rejectsWithCode(t, b.send(['EVALSHA', 'ffffffffffffffffffffffffffffffffffffffff', 0]), 'NOSCRIPT', 'EVALSHA of an unknown SHA');
      if (!ctx.capabilities.cluster) {
        // The node that ran it keeps it; on a cluster a keyless EVALSHA may reach another node.
        t.same(await b.send(['EVALSHA', order.sha, 2, k1, k2, 'a', 7, 1.5]), expected, 'EVALSHA by its SHA after it ran once');
      }
      t.equal(await b.send(['EVAL', 'return ARGV[1] .. KEYS[1]', 1, k1, 'x']), `x${k1}`, 'EVAL sent as a plain command');

      const write = script(ctx, 'write', "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])");
      t.equal(await b.evalScript(write, [k1], ['written']), 'written');
      t.equal(await b.send(['GET', k1]), 'written', 'a script write is visible to later commands');
    }),
  );

  await t.test('Lua values convert to replies as Redis converts them', (t) =>
    ctx.use('convert', async (b) => {
      const run = (name: string, body: string, keys: string[] = [], args: (string | number)[] = []) =>
        b.evalScript(script(ctx, name, body), keys, args);
      t.equal(await run('float', 'return 3.7'), 3, 'a float is truncated to an integer (3.7 → 3)');
      t.equal(await run('negfloat', 'return -2.9'), -2, 'truncated toward zero (-2.9 → -2)');
      t.equal(await run('int', 'return 42'), 42);
      t.equal(await run('str', "return 'text'"), 'text');
      t.equal(await run('true', 'return true'), 1, 'true → 1');
      t.equal(await run('false', 'return false'), null, 'false → null');
      t.equal(await run('nil', 'return nil'), null, 'nil → null');
      t.same(
        await run('table', "return {'a', 1, {'b', 2.9, {'c'}}, 3.2}"),
        ['a', 1, ['b', 2, ['c']], 3],
        'a table of strings, numbers and nested tables → nested arrays, floats truncated',
      );
      t.same(await run('hash', 'return {a = 1, b = 2}'), [], 'a table with only string keys → []');
      t.same(await run('mixed', "return {1, 'two', name = 'x'}"), [1, 'two'], 'string keys of a mixed table are dropped');
      t.same(await run('holes', 'return {1, nil, 3}'), [1], 'an array stops at its first nil');

      const k = ctx.key('convert', 'k');
      t.equal(await run('nilget', "return tostring(redis.call('GET', KEYS[1]))", [k]), 'false', "a nil reply is false inside Lua");
      await b.send(['HSET', k, 'f', 'v', 'g', 'w']);
      t.equal(await run('flat', "return #redis.call('HGETALL', KEYS[1])", [k]), 4, 'HGETALL is a flat table inside Lua');
      t.equal(await run('incr', "return redis.call('HINCRBY', KEYS[1], 'n', 5) + 1", [k]), 6, 'an integer reply is a Lua number');
      t.same(
        await run('status', "local r = redis.call('SET', KEYS[2], 'v'); return {type(r), r.ok, redis.call('TYPE', KEYS[2]).ok}", [k, ctx.key('convert', 's')]),
        ['table', 'OK', 'string'],
        'a status reply is {ok = …} inside Lua',
      );
      t.equal(await run('status_back', "return redis.call('SET', KEYS[1], 'v')", [ctx.key('convert', 's')]), 'OK', 'and a status reply again when returned');
      await run('numbers', "redis.call('SET', KEYS[1], 10 / 2); redis.call('SET', KEYS[2], 0.5); return 0", [ctx.key('convert', 'half'), ctx.key('convert', 'small')]);
      t.equal(await b.send(['GET', ctx.key('convert', 'half')]), '5', 'a whole number argument is sent without a decimal point (10 / 2 → 5)');
      t.equal(await b.send(['GET', ctx.key('convert', 'small')]), '0.5', 'a fraction is sent as its decimal text');
    }),
  );

  await t.test('error and status replies from scripts', (t) =>
    ctx.use('lua-errors', async (b) => {
      const run = (name: string, body: string, keys: string[] = []) => b.evalScript(script(ctx, name, body), keys, []);
      await rejectsWithCode(t, run('error_reply', "return redis.error_reply('MYCODE something went wrong')"), 'MYCODE', 'redis.error_reply');
      await rejectsWithCode(t, run('err_table', "return {err = 'OTHER bad input'}"), 'OTHER', 'return {err = …}');
      const outcome = await settled(run('error_message', "return redis.error_reply('MYCODE something went wrong')"));
      t.match((outcome.error as ReplyError | undefined)?.message, /something went wrong/, 'the error message is kept');
      t.equal(await run('status_reply', "return redis.status_reply('FINE')"), 'FINE', 'redis.status_reply → string');
      t.equal(await run('ok_table', "return {ok = 'FINE'}"), 'FINE', 'return {ok = …} → string');

      const k = ctx.key('lua-errors', 'str');
      await b.send(['SET', k, 'abc']);
      await rejectsWithCode(t, run('call_error', "return redis.call('LPUSH', KEYS[1], 'x')", [k]), 'WRONGTYPE', 'a failing redis.call');
      const pcalled = await run('pcall', "return redis.pcall('LPUSH', KEYS[1], 'x')['err']", [k]);
      t.match(pcalled, /^WRONGTYPE /, 'redis.pcall returns the error as {err = …} instead of raising it');
      await rejectsWithCode(t, run('unknown', "return redis.call('NOSUCHCOMMAND')"), 'ERR', 'redis.call of an unknown command');
      await rejectsWithCode(t, run('global_write', 'counter = 1; return counter'), 'ERR', 'a script that creates a global variable');
      await rejectsWithCode(t, run('global_read', 'return undefined_name'), 'ERR', 'a script that reads an undefined global');
      const caught = await settled(run('syntax', 'return {{{'));
      t.ok(caught.error instanceof ReplyError, 'a script that does not compile rejects with ReplyError');
      t.equal(await b.send(['GET', k]), 'abc', 'the connection still serves commands');
    }),
  );

  await t.test('cjson.encode and cjson.decode are available', (t) =>
    ctx.use('cjson', async (b) => {
      const run = (name: string, body: string, args: string[] = []) => b.evalScript(script(ctx, name, body), [], args);
      const encoded = await run('encode', "return cjson.encode({name = 'x', list = {1, 2.5, 'three'}, nested = {ok = true, no = false}})");
      t.same(
        JSON.parse(encoded as string),
        { name: 'x', list: [1, 2.5, 'three'], nested: { ok: true, no: false } },
        'objects, arrays, numbers, strings and booleans encode as JSON',
      );
      t.equal(await run('empty', 'return cjson.encode({})'), '{}', 'an empty table encodes as {}');
      const tricky = 'quote " backslash \\ newline \n tab \t unicode é ✓';
      t.equal(JSON.parse((await run('string', 'return cjson.encode(ARGV[1])', [tricky])) as string), tricky, 'strings are escaped so JSON.parse gets them back');
      t.same(
        await run(
          'decode',
          'local v = cjson.decode(ARGV[1]); return {v.name, v.list[2], tostring(v.flag), v.nested.deep, #v.list, v.count * 2}',
          [JSON.stringify({ name: 'x', list: ['a', 'b', 'c'], flag: true, nested: { deep: 'y' }, count: 21 })],
        ),
        ['x', 'b', 'true', 'y', 3, 42],
        'JSON decodes to Lua tables, strings, numbers and booleans',
      );
      t.equal(
        await run('roundtrip', 'return cjson.encode(cjson.decode(ARGV[1]))', ['[1,"two",[3]]']),
        '[1,"two",[3]]',
        'an array survives decode then encode',
      );
    }),
  );
}
