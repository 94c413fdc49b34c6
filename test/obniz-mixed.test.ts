// Mixed fleets with obniz-app-sdk 1.5 on real Redis, the SDK's side played by
// test/support/obniz-sdk.ts as the SDK does it (bare keys, its Lua with KEYS
// and cjson re-encoding, its heartbeats and envelopes): the `coord obniz`
// commands against an SDK-only fleet, isFirstManager in both start orders,
// no onInstall on a move from an SDK slave, device data an SDK worker can
// parse, an SDK-re-encoded [] that restarts nothing, a dead coord slave
// cleaned up by an SDK manager, an SDK Worker subclass's real error, and the
// docs' `coord obniz request temperature`.
import t from 'tap';
import { join } from 'node:path';
import { createBackend } from '../adapters/index.ts';
import { runCli } from '../cli/app.ts';
import type { Backend } from '../core/backend.ts';
import type { Manager } from '../plugins/obniz/roles/manager.ts';
import type { Slave } from '../plugins/obniz/roles/slave.ts';
import { touchSlave } from '../plugins/obniz/scripts.ts';
import { SdkManager, SdkSlave, sdkTimings, type SdkWorkerRecord } from './support/obniz-sdk.ts';
import { deviceFile, devices, fixtures, manualClock, obnizCtx, recordEvents, startManager, startSlave } from './support/obniz.ts';
import { until } from './support/until.ts';
import { startRig } from './support/rig.ts';
import { startRedis } from './support/redis.ts';
import { root } from './support/cli.ts';

const { redis, backend, atEnd } = await startRig(t, 'obniz');
/** The SDK's own connection. */
const sdk: Backend = await createBackend({ url: redis.url });
atEnd(() => sdk.close());

/**
 * coord roles beside SDK processes: the SDK's TTL and death rule (SDK slaves beat only every 10 s), quicker beats and
 * checks. Deaths here are played by deleting a heartbeat (missing = dead), never by waiting for one to age.
 */
const mixed = { heartbeatInterval: 0.5, heartbeatTtl: 20, deadAfter: 30, healthCheckInterval: 0.5 };

/** `coord …` in this process, on the test's Redis (bare keys, as the SDK uses). */
async function coord(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli([...args, '--redis', redis.url], { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Runs fn, then stops what it started (coord roles and SDK processes), whatever happens. */
type Stoppable = Slave | Manager | SdkSlave | SdkManager;

async function scope(fn: (track: <T extends Stoppable>(p: T) => T) => Promise<void>): Promise<void> {
  await sdk.send(['FLUSHALL']);
  const started: Stoppable[] = [];
  try {
    await fn((p) => (started.push(p), p));
  } finally {
    for (const p of started.reverse()) await (p instanceof SdkSlave ? p.kill() : p.stop('test done')).catch(() => {});
  }
}

t.test('an SDK-only fleet (SDK manager and slaves, no coord manager): the coord obniz commands see every live SDK slave', (t) =>
  scope(async (track) => {
    const list = devices(6);
    const s1 = track(await new SdkSlave(sdk, 'sdk-s1').start());
    const manager = track(await new SdkManager(sdk, 'sdk-m', () => list).startWait({ loops: false }));
    await until('the SDK manager put all six on the only SDK slave', () => s1.running.size === 6);
    const s2 = track(await new SdkSlave(sdk, 'sdk-s2').start());
    t.same(await backend.send(['EXISTS', 'obniz:slaves']), 0, 'no coord process has written coord\'s slave index');

    const balanced = await coord('obniz', 'relocate-all', '--json');
    t.equal(balanced.code, 0, balanced.err);
    t.same(JSON.parse(balanced.out).counts, { 'sdk-s1': 3, 'sdk-s2': 3 }, 'relocate-all balanced the SDK slaves');
    await until('the SDK slaves acted on the command\'s synchronize', () => s1.running.size === 3 && s2.running.size === 3);

    const asked = await coord('obniz', 'request', 'temp');
    t.equal(asked.code, 0, asked.err);
    const answers = JSON.parse(asked.out) as Record<string, string>;
    t.same(answers, Object.fromEntries(list.map((d) => [d.id, `sdk:temp:${d.id}`])), 'every SDK worker answered');
    t.same(answers, await manager.request('temp'), 'the same as the SDK manager\'s own app.request on the same fleet');

    const [first] = [...s1.running.keys()];
    const direct = await coord('obniz', 'request', 'temp', '--device', first!);
    t.equal(direct.code, 0, direct.err);
    t.equal(JSON.parse(direct.out)[first!], `sdk:temp:${first}`, 'request --device found the SDK slave that runs it');

    const bare = await coord('obniz', 'relocate', first!);
    t.equal(bare.code, 1);
    t.equal(bare.err, `coord: relocating ${first}: NO_NEED_TO_RELOCATE: its slave sdk-s1 is alive; add --force to move it anyway`, 'the hint, in one line');
    const forced = await coord('obniz', 'relocate', first!, '--force');
    t.equal(forced.code, 0, forced.err);
    t.equal(forced.out, `moved ${first} from sdk-s1 to sdk-s2`);
    await until('the SDK slaves moved it', () => s2.running.has(first!) && !s1.running.has(first!));
    t.same(await manager.request('temp'), answers, 'the SDK manager still reaches all six');

    // nobody left to ask: an error, not {} with exit 0
    await s1.kill();
    await s2.kill();
    await sdk.send(['DEL', 'slave:sdk-s1:heartbeat', 'slave:sdk-s2:heartbeat']); // as their EX 20 runs out
    const none = await coord('obniz', 'request', 'temp');
    t.equal(none.code, 1);
    t.equal(none.out, '');
    t.match(none.err, /^coord: request "temp": no slave is alive to ask/);
    t.notOk(none.err.includes('\n'), 'one line');
    const noWorker = await coord('obniz', 'relocate-all');
    t.equal(noWorker.code, 1);
    t.equal(noWorker.err, 'coord: relocating all devices: NO_WORKER', 'what the SDK\'s doAllRelocate says too');
    await t.rejects(manager.doAllRelocate(), /NO_WORKER/);
  }));

t.test('isFirstManager beside a live SDK manager, in both start orders', (t) =>
  scope(async (track) => {
    const sdkFirst = track(await new SdkManager(sdk, 'sdk-m').startWait({ loops: false }));
    t.match(await sdk.send(['GET', 'master:sdk-m:heartbeat']), /^\d{10}$/, 'the SDK manager\'s first beat is in seconds');
    t.equal(sdkFirst.isFirstManager(), true);
    const coordSecond = track(await startManager(backend, '', 'coord-m', { deviceSource: 'none', ...mixed }));
    t.equal(coordSecond.isFirstManager(), false, 'coord found the SDK manager before counting');
    await coordSecond.stop();
    await sdkFirst.stop();

    await sdk.send(['FLUSHALL']);
    const coordFirst = track(await startManager(backend, '', 'coord-m', { deviceSource: 'none', ...mixed }));
    t.equal(coordFirst.isFirstManager(), true);
    const sdkSecond = track(await new SdkManager(sdk, 'sdk-m').startWait({ loops: false }));
    t.equal(sdkSecond.isFirstManager(), false, 'the SDK manager saw coord\'s heartbeat');
  }));

t.test('no onInstall on a move from an SDK slave to a coord slave; obniz:installs:new does not grow with the SDK slave\'s devices', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const file = deviceFile(devices(6));
    const sdkSlave = track(await new SdkSlave(sdk, 'sdk-s1').start());
    const manager = track(await startManager(backend, '', 'coord-m', { devices: file.path, ...mixed }));
    await until('the coord manager gave all six to the SDK slave', () => sdkSlave.running.size === 6);
    t.equal(await backend.send(['SCARD', 'obniz:installs:new']), 0, 'devices an SDK slave runs are not marked new');

    const c1 = track(await startSlave(backend, '', 'c1', mixed));
    t.same((await manager.doAllRelocate()).counts, { c1: 3, 'sdk-s1': 3 });
    await until('three moved to the coord slave', () => c1.running().length === 3 && sdkSlave.running.size === 3);
    t.same(events.filter((e) => e.ev === 'install'), [], 'moved from an SDK slave by a coord relocation: no onInstall');

    // the SDK slave dies; an SDK manager's health check moves its devices (its Lua, re-encoding them)
    const sdkManager = track(await new SdkManager(sdk, 'sdk-m').startWait({ loops: false }));
    await sdkSlave.kill();
    await sdk.send(['DEL', 'slave:sdk-s1:heartbeat']);
    await sdkManager.healthCheck();
    await until('all six on the coord slave', () => c1.running().length === 6);
    t.same(events.filter((e) => e.ev === 'install'), [], 'moved by the SDK manager: no onInstall either');
    t.same(events.filter((e) => e.ev === 'start').length, 6, 'each started once');

    // a device really new to the fleet, placed on the coord slave: onInstall once
    const added = devices(1, 50)[0]!;
    file.write([...devices(6), added]);
    await until('the new device runs', () => c1.running().includes(added.id));
    t.same(events.filter((e) => e.ev === 'install').map((e) => e.id), [added.id], 'onInstall for the new one only');
    t.equal(await backend.send(['SCARD', 'obniz:installs:new']), 0, 'no mark left behind');
  }));

t.test('device data: what a coord manager stores parses in an SDK worker (configs JSON text, a hardware), from old-style lists too', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const records: SdkWorkerRecord[] = [];
    // an old-style list: configs as a map, a bare id; and one already in the SDK's shape
    const file = deviceFile(null, 'devices.yaml');
    file.writeText('- id: 0000-0001\n  configs: { room: kitchen, floor: 2 }\n- 0000-0002\n- id: 0000-0003\n  hardware: blewifi_gw2\n  configs: \'{"room":"office"}\'\n');
    const sdkSlave = track(await new SdkSlave(sdk, 'sdk-s1', records).start());
    const manager = track(await startManager(backend, '', 'coord-m', { devices: file.path, ...mixed }));
    await until('three on the SDK slave', () => sdkSlave.running.size === 3);
    const starts = Object.fromEntries(records.map((r) => [r.id, r]));
    t.same(records.filter((r) => r.configsError), [], 'JSON.parse(deviceInfo.configs) worked for every device');
    t.same(starts['0000-0001'], { id: '0000-0001', slave: 'sdk-s1', ev: 'start', hardware: 'unknown', configs: { room: 'kitchen', floor: 2 } });
    t.same(starts['0000-0002'], { id: '0000-0002', slave: 'sdk-s1', ev: 'start', hardware: 'unknown', configs: {} });
    t.same(starts['0000-0003'], { id: '0000-0003', slave: 'sdk-s1', ev: 'start', hardware: 'blewifi_gw2', configs: { room: 'office' } });
    const stored = JSON.parse((await sdk.send(['HGET', 'workers:sdk-s1', '0000-0001'])) as string);
    t.same(stored.install, { id: '0000-0001', configs: '{"room":"kitchen","floor":2}', hardware: 'unknown' }, 'stored as the SDK stores it');

    // coord workers get the same shape (the recording worker parses configs in its constructor, as an SDK worker does)
    const c1 = track(await startSlave(backend, '', 'c1', mixed));
    await manager.doAllRelocate();
    await until('some moved to the coord slave', () => c1.running().length > 0 && c1.running().length + sdkSlave.running.size === 3);
    for (const id of c1.running()) {
      t.same(events.find((e) => e.id === id && e.ev === 'start')!.configs, starts[id]!.configs, `${id}: the coord worker parsed the same configs`);
    }
  }));

t.test('an SDK-re-encoded [] does not restart the device: a coord manager reads "tags":{} as its "tags":[]', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const tagged = { id: 'tag-1', hardware: 'obnizb1', configs: '{}', tags: [], groups: { ids: [] } };
    const file = deviceFile([tagged]);
    const sdkSlave = track(await new SdkSlave(sdk, 'sdk-s1').start());
    const manager = track(await startManager(backend, '', 'coord-m', { devices: file.path, ...mixed }));
    await until('on the SDK slave', () => sdkSlave.running.has('tag-1'));
    const c1 = track(await startSlave(backend, '', 'c1', mixed));
    const sdkManager = track(await new SdkManager(sdk, 'sdk-m').startWait({ loops: false }));
    t.equal(await sdkManager.autoRelocate('tag-1', true), 'c1', 'the SDK manager moves it to the coord slave');
    const moved = (await sdk.send(['HGET', 'workers:c1', 'tag-1'])) as string;
    t.match(moved, /"tags":\{\}/, 'its Lua wrote [] back as {}');
    await sdkManager.synchronize();
    await until('the coord slave runs it', () => c1.running().includes('tag-1'));

    await manager.syncNow();
    t.same(manager.lastSync, { added: 0, updated: 0, removed: 0, waiting: 0 }, 'the list\'s [] equals the entry\'s {}: no update');
    t.equal(await sdk.send(['HGET', 'workers:c1', 'tag-1']), moved, 'the entry was not rewritten');
    await c1.sync();
    t.same(events.filter((e) => e.id === 'tag-1').map((e) => e.ev), ['start'], 'started once, never restarted');
  }));

t.test('a dead coord slave cleaned up by an SDK manager leaves coord\'s slave list', (t) =>
  scope(async (track) => {
    const sdkSlave = track(await new SdkSlave(sdk, 'sdk-s1').start());
    const alive = track(await startSlave(backend, '', 'c-alive', mixed));
    // what a coord slave leaves when killed -9: its index entries and list, its heartbeat expired
    const ctx = obnizCtx(backend, { prefix: '', config: mixed, clock: manualClock(Date.now() - 60_000) });
    await touchSlave(ctx, 'c-dead'); // its last beat, a minute ago
    await sdk.send(['HSET', 'workers:c-dead', 'd-1', JSON.stringify({ install: devices(1)[0], instanceName: 'c-dead', updatedMillisecond: Date.now() })]);
    await sdk.send(['DEL', 'slave:c-dead:heartbeat']);
    const sdkManager = track(await new SdkManager(sdk, 'sdk-m', undefined, { heartbeatMs: 10_000, ttlS: 20, deadAfterMs: 30_000, healthCheckMs: 10_000 }).startWait({ loops: false }));
    t.same(await sdkManager.healthCheck(), ['c-dead'], 'the SDK manager found it dead, moved its device and deleted its keys');
    await until('c-dead left coord\'s slave index (c-alive\'s heartbeat dropped it)', async () => (await backend.send(['ZSCORE', 'obniz:slaves', 'c-dead'])) === null);
    t.equal(await backend.send(['SISMEMBER', 'obniz:slaves:coord', 'c-dead']), 0, 'and the coord-slave set');
    const status = await coord('obniz', 'status', '--json');
    t.same((JSON.parse(status.out) as { slaves: { name: string }[] }).slaves.map((s) => s.name), ['c-alive', 'sdk-s1'], 'status lists the live fleet');
    t.ok(alive && sdkSlave);
  }));

t.test('an obniz-app-sdk Worker subclass as a coord worker: the error is its constructor\'s own', (t) =>
  scope(async (track) => {
    const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
    const file = deviceFile(devices(1));
    track(await startSlave(backend, '', 'c1', { ...mixed, worker: join(fixtures, 'sdk-worker.mjs') }, lines as never));
    track(await startManager(backend, '', 'coord-m', { devices: file.path, ...mixed }));
    const line = await until('the construction error', () => lines.find((l) => l.level === 'error' && l.msg.includes('failed to construct')));
    t.equal(line.msg, `worker ${devices(1)[0]!.id}: the worker class failed to construct: this.app.obnizClass is not a constructor`);
    t.notOk(lines.some((l) => l.msg.includes('without \'new\'')), 'not "cannot be invoked without \'new\'"');
  }));

t.test('the docs\' example: `coord obniz request temperature` answers from examples/obniz/worker.mjs', (t) =>
  scope(async (track) => {
    const slave: Slave = track(await startSlave(backend, '', 's1', { ...mixed, worker: join(root, 'examples/obniz/worker.mjs') }));
    const manager: Manager = track(await startManager(backend, '', 'm1', { ...mixed, devices: join(root, 'examples/obniz/devices.yaml') }));
    await until('the example\'s three devices run', () => slave.running().length === 3);
    t.ok(manager);
    const answers = await until('every device answered a temperature', async () => {
      const r = await coord('obniz', 'request', 'temperature');
      const values = r.code === 0 ? (JSON.parse(r.out) as Record<string, string>) : {};
      return Object.values(values).length === 3 && Object.values(values).every((v) => v !== '') ? values : undefined;
    });
    for (const value of Object.values(answers)) t.match(value, /^\d+\.\d$/, `a reading: ${value}`);
    const one = await coord('obniz', 'request', 'temperature', '--device', '0000-0001');
    t.equal(one.code, 0, one.err);
    t.match(JSON.parse(one.out), { '0000-0001': /^\d+\.\d$/ });
  }));

t.test('Redis restarts empty with an SDK slave in the fleet: each device goes back to the slave it ran on, so none starts on a coord slave while the SDK slave (which takes no claims) still runs it', async (t) => {
  const events = recordEvents();
  const own = await startRedis();
  const b = await createBackend({ url: own.url });
  const sdkOwn = await createBackend({ url: own.url });
  const sdkSlave = await new SdkSlave(sdkOwn, 'sdk-s1', [], { ...sdkTimings, heartbeatMs: 300 }).start();
  const manager = await startManager(b, '', 'coord-m', { devices: deviceFile(devices(8)).path, ...mixed });
  await until('all eight on the SDK slave', () => sdkSlave.running.size === 8);
  // a coord slave joins: new devices would go to it (least loaded), but these eight run on the SDK slave
  const c1 = await startSlave(b, '', 'c1', mixed);
  t.teardown(async () => {
    await manager.stop();
    await c1.stop('test done');
    await sdkSlave.kill();
    await sdkOwn.close();
    await b.close();
    await own.stop();
  });
  const onSdk = [...sdkSlave.running.keys()].sort();

  const restartedAt = Date.now();
  await own.restart();
  t.equal(await b.send(['HLEN', 'workers:sdk-s1']).catch(() => 0), 0, 'Redis came back empty');
  await until('all eight listed again', async () => (await b.send(['HLEN', 'workers:sdk-s1']).catch(() => 0)) === 8, 30_000);
  await manager.syncNow();
  await c1.sync();
  t.same(((await b.send(['HKEYS', 'workers:sdk-s1'])) as string[]).sort(), onSdk, 'the SDK slave got its eight back, though the coord slave had none');
  t.equal(await b.send(['HLEN', 'workers:c1']), 0, 'none was listed on the coord slave');
  t.same(events.filter((e) => e.t >= restartedAt && e.ev === 'start'), [], 'no device the SDK slave ran was started on the coord slave');
  t.same([...sdkSlave.running.keys()].sort(), onSdk, 'the SDK slave runs the same eight');
});
