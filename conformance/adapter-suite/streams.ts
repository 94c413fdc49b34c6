// Streams: XADD with caps, ranges, XREAD (also BLOCK), XTRIM, XDEL, and consumer groups
// when the adapter declares them.
import type { SuiteTest } from '../suite-test.ts';
import type { Reply } from '../../core/backend.ts';
import { rejectsWithCode, settled, sleep, type SuiteContext } from './support.ts';
import { WAKE_MS } from './blocking.ts';

const ID = /^\d+-\d+$/;

type Entry = [id: string, fields: string[]];

export async function streamTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  await t.test('XADD, XLEN, XRANGE, XREVRANGE, XREAD', (t) =>
    ctx.use('stream', async (b) => {
      const s = ctx.key('stream', 's');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await b.send(['XADD', s, '*', 'n', i, 'tag', `t${i}`])) as string);
      t.ok(ids.every((id) => ID.test(id)), 'XADD * returns ids like 1700000000000-0');
      t.same([...ids].sort(compareIds), ids, 'ids grow');
      t.equal(await b.send(['XLEN', s]), 5);
      t.same(await b.send(['XRANGE', s, '-', '+', 'COUNT', 2]), [[ids[0], ['n', '0', 'tag', 't0']], [ids[1], ['n', '1', 'tag', 't1']]], 'XRANGE COUNT 2 → the first two');
      t.same(await b.send(['XREVRANGE', s, '+', '-', 'COUNT', 2]), [[ids[4], ['n', '4', 'tag', 't4']], [ids[3], ['n', '3', 'tag', 't3']]], 'XREVRANGE COUNT 2 → the last two, newest first');
      t.same(((await b.send(['XRANGE', s, ids[1]!, ids[3]!])) as Entry[]).map((e) => e[0]), ids.slice(1, 4), 'XRANGE between two ids is inclusive');
      t.same(
        await b.send(['XREAD', 'COUNT', 10, 'STREAMS', s, ids[2]!]),
        [[s, [[ids[3], ['n', '3', 'tag', 't3']], [ids[4], ['n', '4', 'tag', 't4']]]]],
        'XREAD from an id → [[stream, entries after it]]',
      );
      t.equal(await b.send(['XREAD', 'STREAMS', s, ids[4]!]), null, 'XREAD with nothing newer → null');
      t.same(await b.send(['XRANGE', ctx.key('stream', 'none'), '-', '+']), [], 'XRANGE of a missing stream → []');
    }),
  );

  await t.test('XADD MAXLEN caps, XTRIM and XDEL', (t) =>
    ctx.use('cap', async (b) => {
      const exact = ctx.key('cap', 'exact');
      const approx = ctx.key('cap', 'approx');
      for (let i = 0; i < 10; i++) {
        await b.send(['XADD', exact, 'MAXLEN', '=', 5, '*', 'n', i]);
        await b.send(['XADD', approx, 'MAXLEN', '~', 5, '*', 'n', i]);
      }
      t.equal(await b.send(['XLEN', exact]), 5, 'MAXLEN = 5 keeps exactly 5');
      const fields = ((await b.send(['XRANGE', exact, '-', '+'])) as Entry[]).map((e) => e[1][1]);
      t.same(fields, ['5', '6', '7', '8', '9'], 'the newest are kept');
      const kept = (await b.send(['XLEN', approx])) as number;
      t.ok(kept >= 5 && kept <= 10, `MAXLEN ~ 5 keeps at least 5 (kept ${kept})`);

      t.equal(await b.send(['XTRIM', exact, 'MAXLEN', 3]), 2, 'XTRIM MAXLEN 3 removes 2');
      t.equal(await b.send(['XLEN', exact]), 3);
      const ids = ((await b.send(['XRANGE', exact, '-', '+'])) as Entry[]).map((e) => e[0]);
      t.equal(await b.send(['XDEL', exact, ids[1]!]), 1, 'XDEL → 1 removed');
      t.equal(await b.send(['XDEL', exact, ids[1]!]), 0, 'XDEL of a removed id → 0');
      t.equal(await b.send(['XLEN', exact]), 2);
      t.same(((await b.send(['XRANGE', exact, '-', '+'])) as Entry[]).map((e) => e[0]), [ids[0], ids[2]], 'the deleted entry is gone');
    }),
  );

  await t.test(`XREAD BLOCK returns null after its timeout and wakes within ${WAKE_MS} ms of an XADD`, (t) =>
    ctx.use('xblock', async (b) => {
      const s = ctx.key('xblock', 's');
      const conn = await b.blocking();
      const start = performance.now();
      t.equal(await conn.send(['XREAD', 'BLOCK', 200, 'STREAMS', s, '$']), null, 'XREAD BLOCK 200 with nothing new → null');
      const took = performance.now() - start;
      t.ok(took >= 150 && took < 2000, `it waited its timeout (${Math.round(took)} ms)`);

      await b.send(['XADD', s, '*', 'n', 'old']);
      const pending = settled(conn.send(['XREAD', 'BLOCK', 5000, 'STREAMS', s, '$']));
      await sleep(50);
      const pushedAt = performance.now();
      const id = await b.send(['XADD', s, '*', 'n', 'new']);
      const outcome = await pending;
      t.same(outcome.value, [[s, [[id, ['n', 'new']]]]], 'it returns only the entry added after it started');
      t.ok(outcome.at - pushedAt < WAKE_MS, `it resolved ${Math.round(outcome.at - pushedAt)} ms after the XADD (block 5 s)`);
      t.equal(await b.send(['PING']), 'PONG');
      await conn.close();
    }),
  );

  const skip = ctx.capabilities.streamGroups ? false : `${ctx.name} declares capabilities.streamGroups false`;
  await t.test('consumer groups: XGROUP CREATE MKSTREAM, XREADGROUP, XACK, XPENDING', { skip }, (t) =>
    ctx.use('groups', async (b) => {
      const s = ctx.key('groups', 's');
      t.equal(await b.send(['XGROUP', 'CREATE', s, 'g', '$', 'MKSTREAM']), 'OK', 'XGROUP CREATE MKSTREAM on a missing stream');
      t.equal(await b.send(['TYPE', s]), 'stream', 'MKSTREAM made the stream');
      await rejectsWithCode(t, b.send(['XGROUP', 'CREATE', s, 'g', '$']), 'BUSYGROUP', 'creating the group again');
      const ids: string[] = [];
      for (const n of ['a', 'b', 'c']) ids.push((await b.send(['XADD', s, '*', 'n', n])) as string);
      const read = await b.send(['XREADGROUP', 'GROUP', 'g', 'alice', 'COUNT', 2, 'STREAMS', s, '>']);
      t.same(read, [[s, [[ids[0], ['n', 'a']], [ids[1], ['n', 'b']]]]], 'XREADGROUP > delivers new entries, COUNT honoured');
      const rest = await b.send(['XREADGROUP', 'GROUP', 'g', 'bob', 'STREAMS', s, '>']);
      t.same(rest, [[s, [[ids[2], ['n', 'c']]]]], 'another consumer gets the rest, not the same entries');
      t.equal(await b.send(['XREADGROUP', 'GROUP', 'g', 'bob', 'STREAMS', s, '>']), null, 'nothing new → null');

      const summary = (await b.send(['XPENDING', s, 'g'])) as Reply[];
      t.equal(summary[0], 3, 'XPENDING counts 3 pending');
      t.equal(summary[1], ids[0], 'smallest pending id');
      t.equal(summary[2], ids[2], 'largest pending id');
      t.same(summary[3], [['alice', '2'], ['bob', '1']], 'pending per consumer');

      t.equal(await b.send(['XACK', s, 'g', ids[0]!, ids[1]!]), 2, 'XACK → number acknowledged');
      t.equal(await b.send(['XACK', s, 'g', ids[0]!]), 0, 'acknowledging again → 0');
      const detail = (await b.send(['XPENDING', s, 'g', '-', '+', 10])) as Reply[][];
      t.equal(detail.length, 1, 'one entry still pending');
      t.equal(detail[0]![0], ids[2], 'its id');
      t.equal(detail[0]![1], 'bob', 'its consumer');
      t.equal(detail[0]![3], 1, 'delivered once');
      const again = await b.send(['XREADGROUP', 'GROUP', 'g', 'bob', 'STREAMS', s, '0']);
      t.same(again, [[s, [[ids[2], ['n', 'c']]]]], "XREADGROUP from 0 re-reads the consumer's own pending entries");
    }),
  );
}

function compareIds(a: string, b: string): number {
  const [ams, aseq] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bms, bseq] = b.split('-').map(BigInt) as [bigint, bigint];
  return ams === bms ? Number(aseq - bseq) : ams < bms ? -1 : 1;
}
