// The example cron plugin's four Lua scripts, on real Redis and on the
// embedded backend (Lua 5.3 with 32-bit integers): one behaviour on both.
// Each tick is queued once however many schedulers ask, claimed by one runner,
// recorded once; stale ticks are skipped and expired leases recorded as lost.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import type { Clock } from '../core/clock.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../examples/cron/index.ts';
import type { CronConfig, CronJob } from '../examples/cron/config.ts';
import type { CronContext } from '../examples/cron/context.ts';
import { claimTick, finishTick, scheduleTick, sweepLeases, tickOf } from '../examples/cron/ticks.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());

const job: CronJob = { id: 'backup', every: 60, command: 'echo hi', timeout: 30 };
let run = 0;

for (const target of [{ name: 'redis', url: redis.url }, { name: 'embedded', url: undefined }]) {
  t.test(target.name, async (t) => {
    const backend: Backend = await createBackend({ url: target.url });
    t.teardown(() => backend.close());
    let now = 1_800_000_000_000;
    const clock: Clock = { now: () => now, sleep: async () => {} };
    const fresh = (config: Partial<CronConfig> = {}) =>
      scenarioContext({ plugin, backend, keyPrefix: `{cron${++run}}:`, signal: new AbortController().signal, clock, config }) as unknown as CronContext;
    const hash = async (ctx: CronContext, jobId = job.id) => {
      const flat = (await backend.send(['HGETALL', ctx.keys.job({ jobId })])) as string[];
      return Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]!]])));
    };
    const history = async (ctx: CronContext) =>
      ((await backend.send(['XRANGE', ctx.keys.runs(), '-', '+'])) as [string, string[]][]).map(([, f]) => Object.fromEntries(f.flatMap((v, i) => (i % 2 ? [] : [[v, f[i + 1]!]]))));

    await t.test('scheduleTick: each tick is queued once, however many schedulers ask', async (t) => {
      const ctx = fresh();
      const tick = tickOf(job, now);
      t.equal(tick % 60, 0, 'a tick starts on a multiple of every');
      const results = await Promise.all(Array.from({ length: 10 }, () => scheduleTick(ctx, job, now)));
      t.equal(results.filter((r) => r.queued).length, 1, 'ten concurrent schedulers: one queued it');
      t.same(await backend.send(['LRANGE', ctx.keys.due(), 0, -1]), [`backup:${tick}`]);
      t.same(await hash(ctx), { every: '60', command: 'echo hi', timeout: '30', lastTick: String(tick), scheduledAt: String(now) }, 'the definition and the last tick');
      t.same(await backend.send(['SMEMBERS', ctx.keys.jobs()]), ['backup']);
      t.equal((await scheduleTick(ctx, job, now - 60_000)).queued, false, 'an earlier tick is not queued after a later one');
      t.equal((await scheduleTick(ctx, job, now + 60_000)).queued, true, 'the next tick is');
      t.equal(await backend.send(['LLEN', ctx.keys.due()]), 2);
    });

    await t.test('claimTick: one runner per tick, under a lease of timeout + leaseGrace', async (t) => {
      const ctx = fresh({ leaseGrace: 5 });
      const tick = tickOf(job, now);
      await scheduleTick(ctx, job, now);
      await scheduleTick(ctx, { ...job, id: 'report', timeout: 2.5 }, now);
      const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => claimTick(ctx, `runner-${i}`, now)));
      const won = claims.flatMap((c, i) => (c ? [{ ...c, runner: `runner-${i}` }] : []));
      t.equal(won.length, 2, 'eight runners, two ticks: two claims');
      t.same(won.map((c) => c.jobId).sort(), ['backup', 'report'], 'each tick claimed once, oldest first');
      const backup = won.find((c) => c.jobId === 'backup')!;
      t.same({ ...backup, runner: undefined }, { jobId: 'backup', tick, command: 'echo hi', timeout: 30, runner: undefined });
      const lease = ctx.keys.lease({ jobId: 'backup', tick });
      t.equal(await backend.send(['GET', lease]), backup.runner, 'the lease names the runner');
      t.equal(await backend.send(['TTL', lease]), 35, 'TTL: timeout 30 + grace 5');
      t.equal(await backend.send(['TTL', ctx.keys.lease({ jobId: 'report', tick })]), 8, 'a fractional timeout rounds up: 2.5 + 5 → 8');
      t.equal(Number(await backend.send(['ZSCORE', ctx.keys.running(), `backup:${tick}`])), now / 1000 + 35, 'running: scored by the second the lease ends');
      t.equal(await claimTick(ctx, 'late', now), undefined, 'nothing left');
    });

    await t.test('claimTick: a tick overtaken by a later one is skipped, not run', async (t) => {
      const ctx = fresh();
      const first = tickOf(job, now);
      for (const offset of [0, 60_000, 120_000]) await scheduleTick(ctx, job, now + offset);
      const claimed = await claimTick(ctx, 'r1', now + 120_000);
      t.equal(claimed?.tick, first + 120, 'the latest tick runs');
      t.equal((await hash(ctx)).skipped, '2', 'the two older ones are counted as skipped');
      t.same((await history(ctx)).map((e) => [e.tick, e.status]), [[String(first), 'skipped'], [String(first + 60), 'skipped']]);
    });

    await t.test('finishTick: records the run once and gives the lease back', async (t) => {
      const ctx = fresh();
      await scheduleTick(ctx, job, now);
      const c = (await claimTick(ctx, 'r1', now))!;
      const run = { jobId: c.jobId, tick: c.tick, runner: 'r1', status: 'ok' as const, exitCode: 0, startedAt: now, finishedAt: now + 1200 };
      t.equal(await finishTick(ctx, run), true);
      t.equal(await finishTick(ctx, run), false, 'a second finish of the same tick records nothing');
      t.equal(await backend.send(['EXISTS', ctx.keys.lease({ jobId: c.jobId, tick: c.tick })]), 0, 'lease released');
      t.equal(await backend.send(['ZCARD', ctx.keys.running()]), 0);
      t.match(await hash(ctx), { runs: '1', lastRunner: 'r1', lastStatus: 'ok', lastFinishedAt: String(now + 1200) });
      t.same(await history(ctx), [{ jobId: 'backup', tick: String(c.tick), runner: 'r1', status: 'ok', exitCode: '0', startedAt: String(now), finishedAt: String(now + 1200) }]);

      await scheduleTick(ctx, job, now + 60_000);
      const d = (await claimTick(ctx, 'r2', now + 60_000))!;
      await finishTick(ctx, { ...run, tick: d.tick, runner: 'r2', status: 'failed', exitCode: 7 });
      t.match(await hash(ctx), { runs: '2', failed: '1', lastStatus: 'failed', lastRunner: 'r2' });
    });

    await t.test('sweepLeases: an expired lease marks its tick lost; a live one is left alone', async (t) => {
      const ctx = fresh({ leaseGrace: 0 });
      await scheduleTick(ctx, job, now);
      const c = (await claimTick(ctx, 'dies', now))!;
      const later = now + 31_000;
      t.same(await sweepLeases(ctx, later), [], 'the lease key still exists (its TTL is Redis time): not lost');
      await backend.send(['DEL', ctx.keys.lease({ jobId: c.jobId, tick: c.tick })]);
      t.same(await sweepLeases(ctx, now + 10_000), [], 'before the lease end: not lost');
      t.same(await sweepLeases(ctx, later), [`backup:${c.tick}`], 'lease gone and its end passed: lost');
      t.same(await sweepLeases(ctx, later), [], 'recorded once');
      t.match(await hash(ctx), { lost: '1', lastStatus: 'lost' });
      t.equal(await finishTick(ctx, { jobId: c.jobId, tick: c.tick, runner: 'dies', status: 'ok', exitCode: 0, startedAt: now, finishedAt: later }), false, 'a run that ends after it was recorded lost is not recorded');
      t.same((await history(ctx)).map((e) => e.status), ['lost']);
      t.equal(await claimTick(ctx, 'other', later), undefined, 'and the lost tick is not run again');
    });

    await t.test('the runs stream keeps the contract\'s cap', async (t) => {
      const ctx = fresh();
      const cap = plugin.contract.keys.runs.maxLength!;
      for (let i = 0; i <= cap + 5; i++) await scheduleTick(ctx, { ...job, every: 1 }, now + i * 1000);
      t.equal(await backend.send(['LLEN', ctx.keys.due()]), cap + 6);
      const claimed = await claimTick(ctx, 'r', now + (cap + 5) * 1000);
      t.equal(claimed?.tick, tickOf({ every: 1 }, now) + cap + 5, 'the newest tick, after skipping the rest');
      t.equal(await backend.send(['XLEN', ctx.keys.runs()]), cap, `${cap + 5} skipped, ${cap} kept`);
    });

    await t.test('ticks after 2038 (past 32-bit seconds) behave the same', async (t) => {
      now = 2_200_000_000_000;
      const ctx = fresh();
      t.equal((await scheduleTick(ctx, job, now)).queued, true);
      t.equal((await scheduleTick(ctx, job, now)).queued, false);
      t.equal((await scheduleTick(ctx, job, now + 60_000)).queued, true);
      const c = (await claimTick(ctx, 'r', now + 60_000))!;
      t.equal(c.tick, tickOf(job, now + 60_000));
      t.equal(Number(await backend.send(['ZSCORE', ctx.keys.running(), `backup:${c.tick}`])), (now + 60_000) / 1000 + 35);
      t.equal(await finishTick(ctx, { jobId: c.jobId, tick: c.tick, runner: 'r', status: 'ok', exitCode: 0, startedAt: now, finishedAt: now + 1 }), true);
    });
  });
}
