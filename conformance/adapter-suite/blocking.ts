// Blocking commands on blocking() connections: null after their timeout, woken at
// once by a push from another connection, and never stalling the shared connection.
import type { SuiteTest } from '../suite-test.ts';
import type { Backend, Command } from '../../core/backend.ts';
import { settled, sleep, type SuiteContext } from './support.ts';

/** How soon after the push a woken pop must resolve (the pops wait up to 5 s). */
// Well under the 5 s timeout, so a wake-up by the push is told apart from one by the timeout,
// with room for a loaded machine (CI runs two test files at once beside Chromium).
export const WAKE_MS = 1000;

export async function blockingTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('blocking pops return null after their timeout', (t) =>
    ctx.use('btimeout', async (b) => {
      const conn = await b.blocking();
      const src = ctx.key('btimeout', 'src');
      const dst = ctx.key('btimeout', 'dst');
      const commands: Command[] = [
        ['BLPOP', src, 0.2],
        ['BRPOP', src, 0.2],
        ['BLMOVE', src, dst, 'LEFT', 'RIGHT', 0.2],
        ['BRPOPLPUSH', src, dst, 0.2],
        ['BZPOPMIN', src, 0.2],
      ];
      for (const command of commands) {
        const start = performance.now();
        const reply = await conn.send(command);
        const took = performance.now() - start;
        t.equal(reply, null, `${command[0]} with timeout 0.2 s → null`);
        t.ok(took >= 150 && took < 2000, `${command[0]} waited its timeout (${Math.round(took)} ms)`);
      }
      await conn.close();
    }),
  );

  await t.test('blocking pops return at once when data is already there', (t) =>
    ctx.use('bready', async (b) => {
      const conn = await b.blocking();
      const list = ctx.key('bready', 'list');
      const dst = ctx.key('bready', 'dst');
      const zset = ctx.key('bready', 'zset');
      await b.send(['RPUSH', list, 'a', 'b', 'c', 'd']);
      await b.send(['ZADD', zset, 2, 'two', 1, 'one']);
      t.same(await conn.send(['BLPOP', list, 5]), [list, 'a'], 'BLPOP → [key, first]');
      t.same(await conn.send(['BRPOP', list, 5]), [list, 'd'], 'BRPOP → [key, last]');
      t.equal(await conn.send(['BLMOVE', list, dst, 'LEFT', 'RIGHT', 5]), 'b', 'BLMOVE → the element moved');
      t.equal(await conn.send(['BRPOPLPUSH', list, dst, 5]), 'c', 'BRPOPLPUSH → the element moved');
      t.same(await b.send(['LRANGE', dst, 0, -1]), ['c', 'b'], 'the destination list got both');
      t.same(await conn.send(['BZPOPMIN', zset, 5]), [zset, 'one', '1'], 'BZPOPMIN → [key, member, score]');
      await conn.close();
    }),
  );

  await t.test(`a push from another connection wakes a blocking pop within ${WAKE_MS} ms`, (t) =>
    ctx.use('bwake', async (b) => {
      const src = ctx.key('bwake', 'src');
      const other = ctx.key('bwake', 'other');
      const dst = ctx.key('bwake', 'dst');
      const zset = ctx.key('bwake', 'zset');
      const cases: { pop: Command; push: Command; expected: unknown }[] = [
        { pop: ['BLPOP', src, 5], push: ['RPUSH', src, 'v1'], expected: [src, 'v1'] },
        { pop: ['BLPOP', other, src, 5], push: ['LPUSH', src, 'v2'], expected: [src, 'v2'] },
        { pop: ['BRPOP', src, 5], push: ['LPUSH', src, 'v3'], expected: [src, 'v3'] },
        { pop: ['BLMOVE', src, dst, 'RIGHT', 'LEFT', 5], push: ['RPUSH', src, 'v4'], expected: 'v4' },
        { pop: ['BRPOPLPUSH', src, dst, 5], push: ['RPUSH', src, 'v5'], expected: 'v5' },
        { pop: ['BZPOPMIN', zset, 5], push: ['ZADD', zset, 3, 'm'], expected: [zset, 'm', '3'] },
        { pop: ['BLPOP', src, 5], push: ['EVAL', "return redis.call('RPUSH', KEYS[1], ARGV[1])", 1, src, 'v6'], expected: [src, 'v6'] },
      ];
      for (const { pop, push, expected } of cases) {
        const { reply, afterPush } = await popWokenBy(b, pop, push);
        t.same(reply, expected, `${pop.join(' ')} got what ${push[0]} pushed`);
        t.ok(afterPush < WAKE_MS, `${pop[0]} resolved ${Math.round(afterPush)} ms after the push (timeout 5 s)`);
      }
      t.same(await b.send(['LRANGE', dst, 0, -1]), ['v5', 'v4'], 'the moves reached the destination');
      t.equal(await b.send(['LLEN', src]), 0, 'every pushed element was taken once');
    }),
  );

  await t.test('blocked pops are served in the order they started waiting', (t) =>
    ctx.use('bfifo', async (b) => {
      const list = ctx.key('bfifo', 'list');
      const first = await b.blocking();
      const second = await b.blocking();
      const before = await blockedClients(b);
      const firstPop = settled(first.send(['BLPOP', list, 5]));
      await untilBlocked(b, before, 1);
      const secondPop = settled(second.send(['BLPOP', list, 5]));
      await untilBlocked(b, before, 2);
      await b.send(['RPUSH', list, 'a', 'b']);
      t.same((await firstPop).value, [list, 'a'], 'the first to wait gets the first element');
      t.same((await secondPop).value, [list, 'b'], 'the second gets the next');
      await first.close();
      await second.close();
    }),
  );

  await t.test('the shared connection is not stalled while a blocking call waits', (t) =>
    ctx.use('bshared', async (b) => {
      const conn = await b.blocking();
      const list = ctx.key('bshared', 'list');
      const pending = settled(conn.send(['BLPOP', list, 3]));
      await sleep(50);
      const start = performance.now();
      t.equal(await b.send(['PING']), 'PONG');
      t.equal(await b.send(['SET', ctx.key('bshared', 'k'), 'v']), 'OK');
      const took = performance.now() - start;
      t.ok(took < 100, `commands answered while BLPOP waits (${Math.round(took)} ms)`);
      await b.send(['RPUSH', list, 'done']);
      t.same((await pending).value, [list, 'done'], 'then the pop completes');
      await conn.close();
    }),
  );
}

/** Starts `pop` on a new blocking connection, sends `push` on the shared one, and times the gap. */
async function popWokenBy(b: Backend, pop: Command, push: Command): Promise<{ reply: unknown; afterPush: number }> {
  const conn = await b.blocking();
  try {
    const pending = settled(conn.send(pop));
    await sleep(50); // let the pop reach the server and block
    const pushedAt = performance.now();
    await b.send(push);
    const outcome = await pending;
    if (outcome.error) throw outcome.error;
    return { reply: outcome.value, afterPush: outcome.at - pushedAt };
  } finally {
    await conn.close();
  }
}

/** Clients blocked on the server (INFO clients), or undefined where the backend has no INFO (embedded). */
async function blockedClients(b: Backend): Promise<number | undefined> {
  try {
    const info = String(await b.send(['INFO', 'clients']));
    const match = /blocked_clients:(\d+)/.exec(info);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until `count` more clients than `before` are blocked, so the order of
 * two pops is the order they reached the server, however loaded the machine.
 * Without INFO (the embedded backend runs in this process) a short pause does.
 */
async function untilBlocked(b: Backend, before: number | undefined, count: number): Promise<void> {
  if (before === undefined) return sleep(30);
  const deadline = Date.now() + 5000;
  while (((await blockedClients(b)) ?? 0) < before + count && Date.now() < deadline) await sleep(5);
}
