// Keys with a time to live: TTL/PTTL values, and keys gone once they expire.
import type { SuiteTest } from '../suite-test.ts';
import { sleep, type SuiteContext } from './support.ts';

export async function expiryTests(t: SuiteTest, ctx: SuiteContext): Promise<void> {
  const skip = ctx.capabilities.expiry ? false : `${ctx.name} declares capabilities.expiry false`;

  await t.test('TTL and PTTL report what SET EX, EXPIRE and PEXPIRE set', { skip }, (t) =>
    ctx.use('ttl', async (b) => {
      const k = ctx.key('ttl', 'a');
      t.equal(await b.send(['SET', k, 'v', 'EX', 10]), 'OK');
      const ttl = await b.send(['TTL', k]);
      t.ok(ttl === 10 || ttl === 9, `TTL after SET EX 10 is 9 or 10 (got ${ttl})`);
      const pttl = (await b.send(['PTTL', k])) as number;
      t.ok(pttl > 9000 && pttl <= 10000, `PTTL after SET EX 10 is in (9000, 10000] (got ${pttl})`);

      const plain = ctx.key('ttl', 'plain');
      await b.send(['SET', plain, 'v']);
      t.equal(await b.send(['TTL', plain]), -1, 'TTL of a key without expiry → -1');
      t.equal(await b.send(['TTL', ctx.key('ttl', 'missing')]), -2, 'TTL of a missing key → -2');
      t.equal(await b.send(['PTTL', ctx.key('ttl', 'missing')]), -2, 'PTTL of a missing key → -2');

      t.equal(await b.send(['EXPIRE', plain, 100]), 1, 'EXPIRE on an existing key → 1');
      const after = await b.send(['TTL', plain]);
      t.ok(after === 100 || after === 99, `TTL after EXPIRE 100 is 99 or 100 (got ${after})`);
      t.equal(await b.send(['EXPIRE', ctx.key('ttl', 'missing'), 100]), 0, 'EXPIRE on a missing key → 0');

      t.equal(await b.send(['PEXPIRE', plain, 5000]), 1, 'PEXPIRE on an existing key → 1');
      const p = (await b.send(['PTTL', plain])) as number;
      t.ok(p > 4000 && p <= 5000, `PTTL after PEXPIRE 5000 is in (4000, 5000] (got ${p})`);
      t.equal(await b.send(['PERSIST', plain]), 1, 'PERSIST removes the expiry');
      t.equal(await b.send(['TTL', plain]), -1);

      const cond = ctx.key('ttl', 'cond');
      await b.send(['SET', cond, 'v']);
      t.equal(await b.send(['EXPIRE', cond, 100, 'XX']), 0, 'EXPIRE XX on a key without expiry → 0');
      t.equal(await b.send(['EXPIRE', cond, 100, 'NX']), 1, 'EXPIRE NX on a key without expiry → 1');
      t.equal(await b.send(['EXPIRE', cond, 200, 'NX']), 0, 'EXPIRE NX on a key with an expiry → 0');
      t.equal(await b.send(['EXPIRE', cond, 50, 'GT']), 0, 'EXPIRE GT with a shorter time → 0');
      t.equal(await b.send(['EXPIRE', cond, 50, 'LT']), 1, 'EXPIRE LT with a shorter time → 1');
      const shorter = await b.send(['TTL', cond]);
      t.ok(shorter === 50 || shorter === 49, `the LT expiry applied (TTL ${shorter})`);
      t.equal(await b.send(['SET', cond, 'updated', 'KEEPTTL']), 'OK');
      const kept = await b.send(['TTL', cond]);
      t.ok(kept === 50 || kept === 49, `SET KEEPTTL keeps the expiry (TTL ${kept})`);
      t.equal(await b.send(['SET', cond, 'plain']), 'OK');
      t.equal(await b.send(['TTL', cond]), -1, 'SET without KEEPTTL clears it');
      t.equal(await b.send(['SET', cond, 'v', 'nx', 'ex', 60]), null, 'lower-case options are options: nx on a taken key → null');
      t.equal(await b.send(['SET', ctx.key('ttl', 'lower'), 'v', 'nx', 'ex', 60]), 'OK');
      const lower = await b.send(['TTL', ctx.key('ttl', 'lower')]);
      t.ok(lower === 60 || lower === 59, `and ex sets the expiry (TTL ${lower})`);
    }),
  );

  await t.test('keys are gone after they expire', { skip }, (t) =>
    ctx.use('expire', async (b) => {
      const ex = ctx.key('expire', 'px');
      const pe = ctx.key('expire', 'pexpire');
      const kept = ctx.key('expire', 'kept');
      await b.send(['SET', ex, 'v', 'PX', 150]);
      await b.send(['HSET', pe, 'f', 'v']);
      t.equal(await b.send(['PEXPIRE', pe, 150]), 1);
      await b.send(['SET', kept, 'v', 'EX', 60]);
      t.equal(await b.send(['EXISTS', ex, pe]), 2, 'both exist before their expiry');
      await sleep(400);
      t.equal(await b.send(['EXISTS', ex, pe]), 0, 'EXISTS → 0 after the expiry');
      t.equal(await b.send(['GET', ex]), null, 'GET → null after the expiry');
      t.same(await b.send(['HGETALL', pe]), [], 'HGETALL → [] after the expiry');
      t.equal(await b.send(['TTL', pe]), -2, 'TTL → -2 after the expiry');
      const seen: string[] = [];
      for await (const key of b.scan(ctx.key('expire', '*'))) seen.push(key);
      t.same(seen, [kept], 'SCAN returns no expired key');
    }),
  );
}
