// The obniz scripts on real Redis (OBNIZ_BACKEND=embedded: on the embedded
// backend, see obniz-scripts-embedded.test.ts): obniz-app-sdk's assignment and
// relocation with every Lua error, doAllRelocate within 1, dead-slave
// relocation, claims, the SDK's value formats.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import type { Ctx } from '../plugins/obniz/context.ts';
import { readList } from '../plugins/obniz/fleet.ts';
import { relocateAll, relocateDevice, relocateSlave } from '../plugins/obniz/relocate.ts';
import { assignDevices, assignEach, claimDevices, releaseDevices, removeDevices, touchManager, touchSlave, updateDevices } from '../plugins/obniz/scripts.ts';
import { obnizStatus } from '../plugins/obniz/status.ts';
import { SlavesAcrossChunks, STATES_FRESH_MS } from '../plugins/obniz/stream-adds.ts';
import { toDeviceList } from '../plugins/obniz/device-list.ts';
import { devices, manualClock, obnizCtx, T0 } from './support/obniz.ts';
import { startRedis } from './support/redis.ts';

const embedded = process.env.OBNIZ_BACKEND === 'embedded';
const redis = embedded ? undefined : await startRedis();
const backend: Backend = await createBackend({ url: redis?.url });
t.teardown(async () => {
  await backend.close();
  await redis?.stop();
});

const clock = manualClock();
t.beforeEach(() => clock.set(T0));
const ctxOf = () => obnizCtx(backend, { clock });

const hget = (ctx: Ctx, slave: string, id: string) => backend.send(['HGET', ctx.keys.workers({ name: slave }), id]) as Promise<string | null>;
const counts = async (ctx: Ctx, names: string[]) => Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await backend.send(['HLEN', ctx.keys.workers({ name: n })])) as number])));
const kill = (ctx: Ctx, name: string) => backend.send(['DEL', ctx.keys.slaveHeartbeat({ name })]);

t.test('touchSlave writes the SDK heartbeat (ms, with a TTL) and the slave index', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 's1');
  t.equal(await backend.send(['GET', ctx.keys.slaveHeartbeat({ name: 's1' })]), String(T0));
  const ttl = (await backend.send(['PTTL', ctx.keys.slaveHeartbeat({ name: 's1' })])) as number;
  t.ok(ttl > 19_000 && ttl <= 20_000, `PTTL ${ttl} ms, set from heartbeatTtl 20 s`);
  t.same(await backend.send(['ZRANGE', ctx.keys.slaveIndex(), 0, -1, 'WITHSCORES']), ['s1', String(T0)]);
});

t.test('assignDevices: NO_ACCEPTABLE_WORKER when no slave is alive (none, missing heartbeat, or older than deadAfter)', async (t) => {
  const ctx = ctxOf();
  t.same(await assignDevices(ctx, devices(2)), [
    { obnizId: '0000-0000', ok: false, detail: 'NO_ACCEPTABLE_WORKER' },
    { obnizId: '0001-0000', ok: false, detail: 'NO_ACCEPTABLE_WORKER' },
  ]);
  await touchSlave(ctx, 's1');
  await kill(ctx, 's1');
  t.equal((await assignDevices(ctx, devices(1)))[0]!.detail, 'NO_ACCEPTABLE_WORKER', 'indexed but heartbeat gone');
  await touchSlave(ctx, 's1');
  clock.advance(30_001);
  t.equal((await assignDevices(ctx, devices(1)))[0]!.detail, 'NO_ACCEPTABLE_WORKER', 'heartbeat older than deadAfter (30 s)');
  t.equal(await backend.send(['HLEN', ctx.keys.workers({ name: 's1' })]), 0, 'nothing was written');
});

t.test('assignDevices replies with only the devices it refused, by position in the batch: the rest went where planned', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 's1');
  await touchSlave(ctx, 's2');
  const [x, y, z] = devices(3, 300);
  await assignDevices(ctx, [z!]);
  const reply = await ctx.scripts.run('assignDevices', {
    keys: { deviceIndex: {}, listStamps: {}, newInstalls: {}, uninstalls: {}, coordSlaves: {} },
    args: { slaveTail: ':heartbeat', nowMs: T0, deadAfterMs: 30_000, devices: [x!.id, 's1', JSON.stringify(x), z!.id, 's1', JSON.stringify(z), y!.id, 'dead', JSON.stringify(y), x!.id, 's2', JSON.stringify(x)] },
  });
  t.strictSame(reply, [2, 'ALREADY_INSTALLED', 3, 'NOT_ALIVE', 4, 'ALREADY_INSTALLED'], 'the reply names the refused by position: assigned already, a dead slave, twice in the batch');
  t.ok(await hget(ctx, 's1', x!.id), 'the first written to its planned slave');
});

t.test('assignDevices: least-loaded slave, the SDK value format, marked new, ALREADY_INSTALLED', async (t) => {
  const ctx = ctxOf();
  for (const s of ['s1', 's2', 's3']) await touchSlave(ctx, s);
  const results = await assignDevices(ctx, devices(9));
  t.ok(results.every((r) => r.ok), 'all assigned');
  t.same(await counts(ctx, ['s1', 's2', 's3']), { s1: 3, s2: 3, s3: 3 }, 'spread evenly');
  const d = devices(1)[0]!;
  const owner = results[0]!.detail;
  t.equal(await hget(ctx, owner, d.id), `{"install":${JSON.stringify(d)},"instanceName":"${owner}","updatedMillisecond":${T0}}`, 'exactly the SDK entry, updatedMillisecond in ms');
  t.equal(await backend.send(['SCARD', ctx.keys.newInstalls()]), 9, 'every new device is marked for onInstall');

  const again = await assignDevices(ctx, [d, ...devices(1, 100), ...devices(1, 100)]);
  t.same(again.map((r) => r.detail), ['ALREADY_INSTALLED', again[1]!.detail, 'ALREADY_INSTALLED'], 'an assigned device, and a duplicate in one batch');
  t.ok(again[1]!.ok);

  // a big batch (every list read once) agrees with a small one (one HEXISTS per slave)
  const big = await assignDevices(ctx, [...devices(50, 200), d]);
  t.equal(big.filter((r) => r.ok).length, 50);
  t.equal(big.at(-1)!.detail, 'ALREADY_INSTALLED');
  const c = Object.values(await counts(ctx, ['s1', 's2', 's3'])) as number[];
  t.ok(Math.max(...c) - Math.min(...c) <= 1, `still within 1: ${c}`);
});

t.test('a sync\'s chunks share one read of the slaves for STATES_FRESH_MS, with what they placed counted; a replan reads anew', async (t) => {
  const ctx = ctxOf();
  for (const s of ['s1', 's2']) await touchSlave(ctx, s);
  const slaves = new SlavesAcrossChunks();
  t.same((await slaves.read(ctx)).map((s) => [s.name, s.alive, s.devices]), [['s1', true, 0], ['s2', true, 0]]);
  for (let i = 0; i < 3; i++) slaves.placedOn('s1');
  await kill(ctx, 's2');
  clock.advance(STATES_FRESH_MS - 1);
  t.same((await slaves.read(ctx)).map((s) => [s.name, s.alive, s.devices]), [['s1', true, 3], ['s2', true, 0]], 'not read again: s2 as last read, s1 counting what was placed');
  // planned on the read above, the devices go to s2 (the least loaded), which refuses them: planned again from a fresh read
  const results: [number, boolean, string][] = [];
  await assignEach(ctx, toDeviceList(devices(2)), (i, ok, detail) => results.push([i, ok, detail]), { unique: true, states: slaves.read });
  t.same(results.sort(), [[0, true, 's1'], [1, true, 's1']], 'every device on the slave alive');
  clock.advance(2);
  t.same((await slaves.read(ctx)).map((s) => [s.name, s.alive, s.devices]), [['s1', true, 2], ['s2', false, 0]], 'read again after STATES_FRESH_MS');
});

t.test('relocateDevice: every obniz-app-sdk error in obniz-app-sdk\'s order, then a move that keeps the install byte for byte', async (t) => {
  const ctx = ctxOf();
  await t.rejects(relocateDevice(ctx, 'x'), { sdkCode: 'NO_ACCEPTABLE_WORKER', code: 'COORD_ERR_OBNIZ_NO_ACCEPTABLE_WORKER' }, 'no alive slave');
  await touchSlave(ctx, 's1');
  await t.rejects(relocateDevice(ctx, 'nope'), { sdkCode: 'NOT_INSTALLED', code: 'COORD_ERR_OBNIZ_NOT_INSTALLED' });
  // a 20-digit number and empty lists: a cjson round trip would change them
  const raw = '{"id":"odd-1","serial":12345678901234567890,"tags":[],"nested":{"a":[]}}';
  await ctx.scripts.run('assignDevices', {
    keys: { deviceIndex: {}, listStamps: {}, newInstalls: {}, uninstalls: {}, coordSlaves: {} },
    args: { slaveTail: ':heartbeat', nowMs: T0, deadAfterMs: 30_000, devices: ['odd-1', 's1', raw] },
  });
  await t.rejects(
    relocateDevice(ctx, 'odd-1'),
    { sdkCode: 'NO_NEED_TO_RELOCATE', code: 'COORD_ERR_OBNIZ_NO_NEED_TO_RELOCATE', message: 'relocating odd-1: NO_NEED_TO_RELOCATE: its slave s1 is alive; add --force to move it anyway' },
    'its slave is alive: the error says which and what to do',
  );
  await t.rejects(relocateDevice(ctx, 'odd-1', true), { sdkCode: 'NO_OTHER_ACCEPTABLE_WORKER', code: 'COORD_ERR_OBNIZ_NO_OTHER_ACCEPTABLE_WORKER' }, 'forced, but no other slave');
  await touchSlave(ctx, 's2');
  clock.advance(1000);
  t.same(await relocateDevice(ctx, 'odd-1', true), { from: 's1', to: 's2' }, 'forced move');
  t.equal(await hget(ctx, 's1', 'odd-1'), null, 'gone from the old list');
  t.equal(await hget(ctx, 's2', 'odd-1'), `{"install":${raw},"instanceName":"s2","updatedMillisecond":${T0 + 1000}}`, 'install text unchanged');
  await kill(ctx, 's2');
  t.same(await relocateDevice(ctx, 'odd-1'), { from: 's2', to: 's1' }, 'not forced: moves because its slave is dead');
});

t.test('relocation reads entries the SDK wrote (seconds as text, a status field) and rewrites them in the SDK format', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 'a');
  await touchSlave(ctx, 'b');
  const sdkValue = JSON.stringify({ install: { id: 'sdk-1', configs: '{"x":1}' }, status: 0, instanceName: 'a', updatedMillisecond: '1800000000' });
  await backend.send(['HSET', ctx.keys.workers({ name: 'a' }), 'sdk-1', sdkValue]);
  t.same(await relocateDevice(ctx, 'sdk-1', true), { from: 'a', to: 'b' });
  const moved = JSON.parse((await hget(ctx, 'b', 'sdk-1'))!);
  t.same(moved, { install: { id: 'sdk-1', configs: '{"x":1}' }, instanceName: 'b', updatedMillisecond: T0 });
  t.same((await readList(ctx, 'b')).get('sdk-1')?.updatedMs, T0);
  // an SDK-written entry in seconds reads as ms
  await backend.send(['HSET', ctx.keys.workers({ name: 'a' }), 'sdk-2', JSON.stringify({ install: { id: 'sdk-2' }, instanceName: 'a', updatedMillisecond: '1800000000' })]);
  t.equal((await readList(ctx, 'a')).get('sdk-2')?.updatedMs, 1_800_000_000_000, 'seconds → ms');
  // an SDK slave's heartbeat in seconds counts as alive
  await backend.send(['SET', ctx.keys.slaveHeartbeat({ name: 'b' }), String(T0 / 1000), 'EX', 20]);
  await t.rejects(relocateDevice(ctx, 'sdk-1'), { sdkCode: 'NO_NEED_TO_RELOCATE', code: 'COORD_ERR_OBNIZ_NO_NEED_TO_RELOCATE' }, 'b (heartbeat in seconds) is alive');
});

t.test('relocateSlave: a dead slave\'s devices spread over the alive ones, its keys go; an alive one is left alone', async (t) => {
  const ctx = ctxOf();
  for (const s of ['a', 'b', 'c']) await touchSlave(ctx, s);
  await assignDevices(ctx, devices(30));
  t.equal(await relocateSlave(ctx, 'a'), 'alive');
  await kill(ctx, 'a');
  const moved = await relocateSlave(ctx, 'a') as { obnizId: string; to: string }[];
  t.equal(moved.length, 10);
  t.same(await counts(ctx, ['a', 'b', 'c']), { a: 0, b: 15, c: 15 });
  t.same(await backend.send(['ZRANGE', ctx.keys.slaveIndex(), 0, -1]), ['b', 'c'], 'removed from the index');
  t.equal(await backend.send(['EXISTS', ctx.keys.workers({ name: 'a' })]), 0);

  await touchSlave(ctx, 'd');
  await assignDevices(ctx, devices(3, 100));
  await kill(ctx, 'b');
  await kill(ctx, 'c');
  await kill(ctx, 'd');
  await t.rejects(relocateSlave(ctx, 'b'), { sdkCode: 'NO_ACCEPTABLE_WORKER', code: 'COORD_ERR_OBNIZ_NO_ACCEPTABLE_WORKER' }, 'no alive slave to take them');
  t.equal(await backend.send(['HLEN', ctx.keys.workers({ name: 'b' })]), 15, 'the list is kept for later');
});

t.test('relocateAll: every alive slave within 1 of every other, fewest moves, dead slaves left alone, NO_WORKER', async (t) => {
  const ctx = ctxOf();
  await t.rejects(relocateAll(ctx), { sdkCode: 'NO_WORKER', code: 'COORD_ERR_OBNIZ_NO_WORKER' });
  await touchSlave(ctx, 's1');
  await assignDevices(ctx, devices(100));
  await touchSlave(ctx, 's2');
  await touchSlave(ctx, 's3');
  await touchSlave(ctx, 'dead');
  await assignDevices(ctx, devices(7, 1000));
  await kill(ctx, 'dead');
  const before = await counts(ctx, ['s1', 's2', 's3', 'dead']);
  const result = await relocateAll(ctx);
  const after = await counts(ctx, ['s1', 's2', 's3', 'dead']);
  t.same(result.counts, { s1: after.s1, s2: after.s2, s3: after.s3 });
  const alive = [after.s1, after.s2, after.s3] as number[];
  t.ok(Math.max(...alive) - Math.min(...alive) <= 1, `within 1: ${JSON.stringify(after)}`);
  t.equal(after.dead, before.dead, 'the dead slave\'s devices are the health check\'s business');
  t.equal(result.moved, (before.s1 as number) - (after.s1 as number), 'only the surplus moved');

  // many shapes, including the ones where obniz-app-sdk's loop stops early
  for (const shape of [[10, 0, 0, 0, 0], [7, 7, 0], [5, 1, 1, 1], [3, 3, 3, 0, 0, 0, 0], [0, 0, 1], [20, 19, 0, 1, 0, 13]]) {
    const c = ctxOf();
    const names = shape.map((_n, i) => `n${i}`);
    for (const [i, name] of names.entries()) {
      await touchSlave(c, name);
      for (let k = 0; k < shape[i]!; k++) await backend.send(['HSET', c.keys.workers({ name }), `${name}-${k}`, `{"install":{"id":"${name}-${k}"},"instanceName":"${name}","updatedMillisecond":1}`]);
    }
    const r = await relocateAll(c);
    const values = Object.values(r.counts);
    t.ok(Math.max(...values) - Math.min(...values) <= 1, `${shape} → ${values}`);
    t.equal(values.reduce((a, b) => a + b, 0), shape.reduce((a, b) => a + b, 0), 'nothing lost');
  }
});

t.test('claims: a moved device starts on its new slave only after the old one gave it back, or died', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 'a');
  await assignDevices(ctx, devices(1));
  const id = devices(1)[0]!.id;
  t.same(await claimDevices(ctx, 'a', [id]), [{ obnizId: id, status: 'ok', fresh: true, holder: '' }], 'new: onInstall');
  t.same(await claimDevices(ctx, 'a', [id]), [{ obnizId: id, status: 'ok', fresh: false, holder: 'a' }], 'again: not new');
  await touchSlave(ctx, 'b');
  await relocateDevice(ctx, id, true);
  t.same(await claimDevices(ctx, 'a', [id]), [{ obnizId: id, status: 'gone', fresh: false, holder: 'a' }], 'not in a\'s list any more');
  t.same(await claimDevices(ctx, 'b', [id]), [{ obnizId: id, status: 'wait', fresh: false, holder: 'a' }], 'a still runs it');
  t.equal(await releaseDevices(ctx, 'b', [id]), 0, 'b cannot give back a\'s claim');
  t.equal(await releaseDevices(ctx, 'a', [id]), 1, 'a stopped it');
  t.same(await claimDevices(ctx, 'b', [id]), [{ obnizId: id, status: 'ok', fresh: false, holder: '' }]);
  // a dead holder's claim is taken over
  await touchSlave(ctx, 'a');
  await relocateDevice(ctx, id, true);
  t.same((await claimDevices(ctx, 'a', [id]))[0]!.status, 'wait');
  await kill(ctx, 'b');
  t.same(await claimDevices(ctx, 'a', [id]), [{ obnizId: id, status: 'ok', fresh: false, holder: 'b' }], 'taken over from dead b');
});

t.test('removeDevices and updateDevices: NOT_INSTALLED, uninstall marks for a running worker, a dead holder\'s claim dropped', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 'a');
  await touchSlave(ctx, 'b');
  const list = devices(4);
  const assigned = await assignDevices(ctx, list);
  const [d0, d1, d2] = list;
  t.same(await updateDevices(ctx, [{ ...d0!, configs: '{"n":99}' }, { id: 'nope' }]), [
    { obnizId: d0!.id, ok: true, detail: assigned[0]!.detail },
    { obnizId: 'nope', ok: false, detail: 'NOT_INSTALLED' },
  ]);
  t.match(await hget(ctx, assigned[0]!.detail, d0!.id), /"configs":"\{\\"n\\":99\}"/);
  await claimDevices(ctx, assigned[1]!.detail, [d1!.id]);
  await claimDevices(ctx, assigned[2]!.detail, [d2!.id]);
  await kill(ctx, assigned[2]!.detail);
  t.same((await removeDevices(ctx, [d1!.id, d2!.id, 'nope'])).map((r) => r.detail), [assigned[1]!.detail, assigned[2]!.detail, 'NOT_INSTALLED']);
  t.same(await backend.send(['SMEMBERS', ctx.keys.uninstalls()]), [d1!.id], 'the alive holder will call onUninstall');
  t.equal(await backend.send(['HGET', ctx.keys.claims(), d2!.id]), null, 'a dead holder\'s claim is dropped');
  t.equal(await backend.send(['SISMEMBER', ctx.keys.newInstalls(), d1!.id]), 0);
  await assignDevices(ctx, [d1!]);
  t.equal(await backend.send(['SISMEMBER', ctx.keys.uninstalls(), d1!.id]), 0, 'installed again: not uninstalled any more');
});

t.test('updateDevices: NO_RUNNING_WORKER (checked first, as the SDK\'s update) when no slave is alive', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 'a');
  const [d0] = await assignDevices(ctx, devices(1));
  await kill(ctx, 'a');
  t.same(await updateDevices(ctx, [{ ...devices(1)[0]!, configs: '{"n":1}' }, { id: 'nope' }]), [
    { obnizId: d0!.obnizId, ok: false, detail: 'NO_RUNNING_WORKER' },
    { obnizId: 'nope', ok: false, detail: 'NO_RUNNING_WORKER' },
  ]);
  t.match(await hget(ctx, 'a', d0!.obnizId), /"configs":"\{\\"n\\":0\}"/, 'the entry is unchanged');
});

t.test('onInstall marks only for coord slaves: a device placed on or moved to an obniz-app-sdk slave is not marked', async (t) => {
  const ctx = ctxOf();
  const isNew = async (id: string) => (await backend.send(['SISMEMBER', ctx.keys.newInstalls(), id])) === 1;
  // an SDK slave: its heartbeat and an index entry (as discover adds it), never touchSlave
  const sdkBeat = () => backend.send(['SET', ctx.keys.slaveHeartbeat({ name: 'sdk' }), String(clock.now()), 'EX', 20]);
  await sdkBeat();
  await backend.send(['ZADD', ctx.keys.slaveIndex(), 'NX', 0, 'sdk']);
  const onSdk = await assignDevices(ctx, devices(2));
  t.same(onSdk.map((r) => r.detail), ['sdk', 'sdk']);
  t.equal(await backend.send(['SCARD', ctx.keys.newInstalls()]), 0, 'devices on an SDK slave are not marked');
  await touchSlave(ctx, 'coord');
  t.same(await backend.send(['SMEMBERS', ctx.keys.coordSlaves()]), ['coord']);
  const [moved] = devices(1);
  t.same(await relocateDevice(ctx, moved!.id, true), { from: 'sdk', to: 'coord' });
  t.same((await claimDevices(ctx, 'coord', [moved!.id]))[0]!.fresh, false, 'moved from an SDK slave to a coord slave: no onInstall');
  const [fresh] = await assignDevices(ctx, devices(1, 10));
  t.equal(fresh!.detail, 'coord');
  t.ok(await isNew(fresh!.obnizId), 'placed on a coord slave: marked');
  t.same(await relocateDevice(ctx, fresh!.obnizId, true), { from: 'coord', to: 'sdk' });
  t.notOk(await isNew(fresh!.obnizId), 'moved, not started yet, to an SDK slave: installed there, the mark goes');
  // relocateAll and a dead coord slave's relocation drop the mark the same way
  await backend.send(['DEL', ctx.keys.workers({ name: 'sdk' })]);
  const batch = await assignDevices(ctx, devices(4, 20));
  t.ok(batch.every((r) => r.detail === 'sdk' || r.detail === 'coord'));
  const onCoord = batch.filter((r) => r.detail === 'coord').map((r) => r.obnizId);
  for (const id of onCoord) t.ok(await isNew(id));
  await relocateAll(ctx);
  const stillNew = (await backend.send(['SMEMBERS', ctx.keys.newInstalls()])) as string[];
  const onCoordNow = [...(await readList(ctx, 'coord')).keys()];
  t.same(stillNew.filter((id) => !onCoordNow.includes(id)), [], 'after relocateAll, only devices on the coord slave are marked');
  await kill(ctx, 'coord');
  await relocateSlave(ctx, 'coord');
  t.equal(await backend.send(['SCARD', ctx.keys.newInstalls()]), 0, 'a dead coord slave\'s unstarted devices moved to the SDK slave: unmarked');
  t.same(await backend.send(['SMEMBERS', ctx.keys.coordSlaves()]), [], 'and it left the coord-slave set');
});

t.test('touchSlave drops index members the SDK considers gone (no heartbeat, no list), rescoring the ones still beating', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 'gone');
  await touchSlave(ctx, 'dead-with-devices');
  await backend.send(['HSET', ctx.keys.workers({ name: 'dead-with-devices' }), 'd1', '{"install":{"id":"d1"},"instanceName":"dead-with-devices","updatedMillisecond":1}']);
  await backend.send(['SET', ctx.keys.slaveHeartbeat({ name: 'sdk' }), String(T0), 'EX', 20]);
  await backend.send(['ZADD', ctx.keys.slaveIndex(), 'NX', 0, 'sdk']);
  // as an SDK manager's health check leaves a dead slave: heartbeat and list deleted, nothing else
  await kill(ctx, 'gone');
  await kill(ctx, 'dead-with-devices');
  clock.advance(31_000);
  await backend.send(['SET', ctx.keys.slaveHeartbeat({ name: 'sdk' }), String(clock.now()), 'EX', 20]);
  t.equal(await touchSlave(ctx, 'me'), 1, 'one member dropped');
  t.same(await backend.send(['ZRANGE', ctx.keys.slaveIndex(), 0, -1]), ['dead-with-devices', 'me', 'sdk'], 'gone left; a dead slave with devices waits for a manager; the beating SDK slave stays');
  t.same(((await backend.send(['SMEMBERS', ctx.keys.coordSlaves()])) as string[]).sort(), ['dead-with-devices', 'me'], 'gone left the coord-slave set too');
  t.equal(await backend.send(['ZSCORE', ctx.keys.slaveIndex(), 'sdk']), String(clock.now()), 'the SDK slave is scored as seen now');
});

t.test('status lists the slaves the SDK would see: a heartbeat or a list; an index member with neither is not shown', async (t) => {
  const ctx = ctxOf();
  await touchSlave(ctx, 'alive');
  await touchSlave(ctx, 'dead-with-devices');
  await backend.send(['HSET', ctx.keys.workers({ name: 'dead-with-devices' }), 'd1', '{"install":{"id":"d1"},"instanceName":"dead-with-devices","updatedMillisecond":1}']);
  await touchSlave(ctx, 'gone');
  await kill(ctx, 'dead-with-devices');
  await kill(ctx, 'gone'); // as an SDK manager leaves a dead slave: no heartbeat, no list, still in coord's index
  t.same((await obnizStatus(ctx)).slaves.map((s) => [s.name, s.alive, s.devices]), [['alive', true, 0], ['dead-with-devices', false, 1]]);
});

t.test('touchManager: isFirstManager without KEYS; a gone manager leaves the index', async (t) => {
  const ctx = ctxOf();
  t.equal(await touchManager(ctx, 'm1'), 0, 'first');
  t.equal(await touchManager(ctx, 'm2'), 1, 'm1 is alive');
  t.equal(await backend.send(['GET', ctx.keys.masterHeartbeat({ name: 'm2' })]), String(T0));
  await backend.send(['DEL', ctx.keys.masterHeartbeat({ name: 'm1' })]);
  t.equal(await touchManager(ctx, 'm2'), 0);
  t.same(await backend.send(['ZRANGE', ctx.keys.managerIndex(), 0, -1]), ['m2']);
  // an SDK manager's first heartbeat is in seconds
  await backend.send(['SET', ctx.keys.masterHeartbeat({ name: 'sdk' }), String(T0 / 1000), 'EX', 20]);
  await backend.send(['ZADD', ctx.keys.managerIndex(), 0, 'sdk']);
  t.equal(await touchManager(ctx, 'm3'), 2);
});
