// MULTI/EXEC (replies in order, errors reject, no interleaving) and pipelines
// (per-entry results, an error entry does not fail the rest).
import type { SuiteTest } from '../suite-test.ts';
import { ReplyError, type Command } from '../../core/backend.ts';
import { rejectsWithCode, type SuiteContext } from './support.ts';

export async function transactionTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('multi returns every reply in order', (t) =>
    ctx.use('multi', async (b) => {
      const k = ctx.key('multi', 'n');
      const h = ctx.key('multi', 'h');
      t.same(
        await b.multi([['SET', k, 1], ['INCR', k], ['GET', k], ['HSET', h, 'f', 'v'], ['HGETALL', h], ['GET', ctx.key('multi', 'none')]]),
        ['OK', 2, '2', 1, ['f', 'v'], null],
        'replies normalised as for send',
      );
    }),
  );

  await t.test('a command error inside EXEC rejects the multi call', (t) =>
    ctx.use('multierr', async (b) => {
      const k = ctx.key('multierr', 's');
      await rejectsWithCode(t, b.multi([['SET', k, 'text'], ['INCR', k], ['GET', k]]), 'ERR', 'INCR of a non-integer inside MULTI');
      await rejectsWithCode(t, b.multi([['SET', k, 'text'], ['LPUSH', k, 'x']]), 'WRONGTYPE', 'LPUSH on a string inside MULTI');
      t.equal(await b.send(['PING']), 'PONG', 'the connection still serves commands');
    }),
  );

  await t.test('concurrent multi blocks do not interleave', (t) =>
    ctx.use('atomic', async (b) => {
      const k = ctx.key('atomic', 'n');
      const blocks = 50;
      const replies = await Promise.all(
        Array.from({ length: blocks }, () => b.multi([['INCR', k], ['INCR', k], ['INCR', k]])),
      );
      const torn = replies.filter((r) => r[1] !== (r[0] as number) + 1 || r[2] !== (r[0] as number) + 2);
      t.equal(torn.length, 0, 'each block saw three consecutive values');
      t.equal(await b.send(['GET', k]), String(blocks * 3), 'the sum is right');
    }),
  );

  await t.test('pipeline returns each reply or its ReplyError', (t) =>
    ctx.use('pipeline', async (b) => {
      const k = ctx.key('pipeline', 's');
      const commands: Command[] = [['SET', k, 'v'], ['LPUSH', k, 'x'], ['GET', k], ['INCR', ctx.key('pipeline', 'n')], ['HGETALL', k]];
      const results = await b.pipeline(commands);
      t.equal(results.length, 5, 'one result per command');
      t.equal(results[0], 'OK');
      t.ok(results[1] instanceof ReplyError, 'the failing entry is a ReplyError');
      t.equal((results[1] as ReplyError).code, 'WRONGTYPE');
      t.equal(results[2], 'v', 'the entries after it still ran');
      t.equal(results[3], 1);
      t.ok(results[4] instanceof ReplyError, 'another failing entry');
      t.same(await b.pipeline([]), [], 'an empty pipeline → []');
    }),
  );
}
