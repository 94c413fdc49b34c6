// The manager and slaves in this process on real Redis: devices spread and
// started with onInstall, list edits reach the workers within one sync,
// requests, a moved device never runs twice (recorded starts and ends), a
// clean stop hands devices over, bad input gives one clear error each.
import t from 'tap';
import { join } from 'node:path';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import type { Manager } from '../plugins/obniz/roles/manager.ts';
import type { Slave } from '../plugins/obniz/roles/slave.ts';
import { readList } from '../plugins/obniz/fleet.ts';
import { deviceFile, devices, fixtures, loops, overlaps, recordEvents, roleCtx, startManager, startSlave } from './support/obniz.ts';
import { until } from './support/until.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
const backend: Backend = await createBackend({ url: redis.url });
t.teardown(async () => {
  await backend.close();
  await redis.stop();
});

let n = 0;
const prefix = () => `{roles${++n}}:`;

/** Runs fn with the roles it starts stopped afterwards, whatever happens. */
async function scope(fn: (track: <T extends Slave | Manager>(role: T) => T) => Promise<void>): Promise<void> {
  const started: (Slave | Manager)[] = [];
  try {
    await fn((role) => (started.push(role), role));
  } finally {
    for (const role of started.reverse()) await role.stop('test done').catch(() => {});
  }
}

t.test('two slaves and a manager: 6 devices, 3 each, onInstall then onStart; request and directRequest answer', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const p = prefix();
    const file = deviceFile(devices(6));
    const s1 = track(await startSlave(backend, p, 's1'));
    const s2 = track(await startSlave(backend, p, 's2'));
    const manager = track(await startManager(backend, p, 'm1', { devices: file.path }));
    t.equal(manager.isFirstManager(), true);
    await until('3 workers on each slave', () => s1.running().length === 3 && s2.running().length === 3);
    const ids = devices(6).map((d) => d.id);
    t.same(events.filter((e) => e.ev === 'install').map((e) => e.id).sort(), ids, 'onInstall once per new device');
    for (const id of ids) {
      const mine = events.filter((e) => e.id === id).map((e) => e.ev);
      t.same(mine, ['install', 'start'], `${id}: onInstall before onStart`);
    }
    const answers = await manager.request('ping');
    t.same(Object.keys(answers).sort(), ids);
    t.match(answers[ids[0]!], new RegExp(`^ping:${ids[0]}:s[12]$`));
    t.same(await manager.directRequest(ids[1]!, 'who'), { [ids[1]!]: `who:${ids[1]}:${s1.running().includes(ids[1]!) ? 's1' : 's2'}` });
    await t.rejects(manager.directRequest('nope', 'x'), /device nope is not installed/);

    const second = track(await startManager(backend, p, 'm2', { devices: file.path }));
    t.equal(second.isFirstManager(), false, 'm1 was alive');
  }));

t.test('device list edits reach the workers within one sync: add (onInstall, onStart), change (onEnd, onStart), remove (onUninstall, onEnd)', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const p = prefix();
    const list = devices(3);
    const file = deviceFile(list);
    const s1 = track(await startSlave(backend, p, 's1'));
    track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('three running', () => s1.running().length === 3);
    const [a, b, c] = list;
    const added = devices(1, 50)[0]!;
    events.length = 0;
    const since = Date.now();
    file.write([a, { ...b!, configs: { n: 'changed' } }, added]);
    await until('six lifecycle events', () => events.length >= 6, 10_000);
    const took = Date.now() - since;
    t.ok(took < 10_000, `applied in ${took} ms (periodic sync is 60 s away: the file change triggered it)`);
    const of = (id: string) => events.filter((e) => e.id === id).map((e) => e.ev);
    t.same(of(added.id), ['install', 'start'], 'added');
    t.same(of(b!.id), ['end', 'start'], 'changed: restarted, no install');
    t.same(events.filter((e) => e.id === b!.id && e.ev === 'start')[0]!.configs, { n: 'changed' }, 'with the new configs');
    t.same(of(c!.id), ['uninstall', 'end'], 'removed: onUninstall before onEnd');
    t.same(of(a!.id), [], 'untouched');
    t.same(s1.running().sort(), [a!.id, b!.id, added.id].sort());
  }));

t.test('a moved device starts on its new slave only after the old one ran onEnd (relocate-all with slow onEnd)', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const p = prefix();
    const list = devices(8, 0, { configs: { endDelayMs: 300 } });
    const file = deviceFile(list);
    const s1 = track(await startSlave(backend, p, 's1'));
    const manager = track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('all on s1', () => s1.running().length === 8);
    const s2 = track(await startSlave(backend, p, 's2'));
    const result = await manager.doAllRelocate();
    t.same(result.counts, { s1: 4, s2: 4 });
    await until('4 and 4 running', () => s2.running().length === 4 && s1.running().length === 4);
    t.same(overlaps(events), [], 'no device ran on two slaves at once');
    const moved = events.filter((e) => e.slave === 's2' && e.ev === 'start');
    t.equal(moved.length, 4);
    for (const start of moved) {
      const end = events.find((e) => e.id === start.id && e.slave === 's1' && e.ev === 'end')!;
      t.ok(end && end.t <= start.t, `${start.id}: s1 ended at ${end?.t}, s2 started at ${start.t}`);
    }
    t.equal(events.filter((e) => e.ev === 'install').length, 8, 'a move is no new install');
    t.equal(events.filter((e) => e.ev === 'uninstall').length, 0, 'nor an uninstall');
  }));

t.test('a slave that stops cleanly hands its devices over at once; the manager removes the dead slave\'s keys', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const p = prefix();
    const file = deviceFile(devices(6));
    const s1 = await startSlave(backend, p, 's1');
    const s2 = track(await startSlave(backend, p, 's2'));
    track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('spread', () => s1.running().length === 3 && s2.running().length === 3);
    const stoppedAt = Date.now();
    await s1.stop('test');
    await until('s2 runs all six', () => s2.running().length === 6, 5000);
    // at once: the stop hands over; a dead slave's devices wait for its heartbeat to expire (3 s: a loaded machine's slack)
    t.ok(Date.now() - stoppedAt < 3000, `taken over in ${Date.now() - stoppedAt} ms`);
    t.same(overlaps(events), []);
    const ctx = roleCtx(backend, p, {});
    t.equal(await backend.send(['EXISTS', ctx.keys.slaveHeartbeat({ name: 's1' }), ctx.keys.workers({ name: 's1' })]), 0);
    t.equal((await readList(ctx, 's2')).size, 6);
  }));

t.test('a change while no slave is alive waits (NO_RUNNING_WORKER, as the SDK\'s update) and applies once a slave is back', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const p = prefix();
    const [device] = devices(1);
    const file = deviceFile([device]);
    const s1 = await startSlave(backend, p, 's1');
    const manager = track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('running', () => s1.running().length === 1);
    await s1.stop('test'); // the last slave: its list stays for the next one
    file.write([{ ...device!, configs: { n: 'changed' } }]);
    await until('the manager saw the change and could not apply it', () => manager.lastSync?.waiting === 1);
    t.same(manager.lastSync, { added: 0, updated: 0, removed: 0, waiting: 1 });
    t.match((await readList(roleCtx(backend, p, {}), 's1')).get(device!.id)?.install.configs, /"n":0/, 'the entry is unchanged');
    const back = track(await startSlave(backend, p, 's1'));
    await until('the changed device runs (retried every syncRetryInterval)', () => events.some((e) => e.ev === 'start' && e.slave === 's1' && (e.configs as { n: unknown }).n === 'changed'));
    t.same(back.running(), [device!.id]);
  }));

t.test('a slave that stops beating is found dead and its devices move; one that cannot write its heartbeat stops its workers first', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const p = prefix();
    const file = deviceFile(devices(4));
    const lines: Parameters<typeof startSlave>[4] = [];
    // s1's backend: a connection we can cut to play a slave that lost Redis.
    // A 3 s TTL leaves the fence 1.25 s of margin before the expiry, so a loaded machine's stalls do not decide the result.
    const timings = { heartbeatInterval: 0.5, heartbeatTtl: 3, deadAfter: 3 };
    const cut = await createBackend({ url: redis.url });
    const s1 = track(await startSlave(cut, p, 's1', timings, lines));
    const s2 = track(await startSlave(backend, p, 's2', timings));
    track(await startManager(backend, p, 'm1', { devices: file.path, ...timings }));
    await until('spread', () => s1.running().length === 2 && s2.running().length === 2);
    const ids = s1.running();
    const ttlLeft = (await backend.send(['PTTL', roleCtx(backend, p, {}).keys.slaveHeartbeat({ name: 's1' })])) as number;
    await cut.close();
    const lostAt = Date.now();
    const expiresAt = lostAt + ttlLeft;
    await until('s1 fences itself', () => s1.running().length === 0, 5000);
    const fencedAt = Date.now();
    await until('s2 runs s1\'s devices', () => ids.every((id) => s2.running().includes(id)), 10_000);
    const movedAt = Date.now();
    t.ok(fencedAt <= expiresAt, `s1 stopped its workers ${fencedAt - lostAt} ms after losing Redis, ${expiresAt - fencedAt} ms before its heartbeat expired`);
    t.ok(movedAt <= expiresAt + 300 + 1000, `devices ran again ${movedAt - lostAt} ms after the loss, ${movedAt - expiresAt} ms after the heartbeat expired (check every 0.3 s, +1 s slack)`);
    t.same(overlaps(events), [], 'never on two slaves');
    t.ok(lines.some((l) => l.level === 'error' && /no heartbeat written for too long/.test(l.msg)), 'one clear error on s1');
  }));

t.test('bad input: a worker that throws in onLoop is one error line, the others keep looping', (t) =>
  scope(async (track) => {
    recordEvents();
    const p = prefix();
    const list = [...devices(2), { id: 'bad-1', configs: { throwInLoop: true } }];
    const file = deviceFile(list);
    const lines: Parameters<typeof startSlave>[4] = [];
    const s1 = track(await startSlave(backend, p, 's1', {}, lines));
    track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('three running', () => s1.running().length === 3);
    await until('ten loops each', () => (loops().get('bad-1') ?? 0) >= 10 && (loops().get(list[0]!.id) ?? 0) >= 10);
    const errors = lines.filter((l) => l.level === 'error');
    t.equal(errors.length, 1, 'one error line for ten failures');
    t.equal(errors[0]!.msg, 'worker bad-1: onLoop failed: sensor of bad-1 unreadable');
    t.equal(errors[0]!.fields.obnizId, 'bad-1');
    t.same(s1.running().length, 3, 'all still running');
  }));

t.test('bad input: a malformed device file is one error, the workers keep running on the last good list; at start it stops the manager', (t) =>
  scope(async (track) => {
    recordEvents();
    const p = prefix();
    const file = deviceFile(devices(2));
    const lines: Parameters<typeof startSlave>[4] = [];
    const s1 = track(await startSlave(backend, p, 's1'));
    track(await startManager(backend, p, 'm1', { devices: file.path }, lines));
    await until('two running', () => s1.running().length === 2);
    file.writeText('[{"id": "0000-0000"}, {"id": ]');
    await until('an error logged', () => lines.some((l) => l.level === 'error'), 5000);
    await new Promise((r) => setTimeout(r, 100));
    file.writeText('[{"id": "0000-0000"}, {"id": ]\n'); // saved again, still broken the same way
    await new Promise((r) => setTimeout(r, 400));
    const errors = lines.filter((l) => l.level === 'error');
    t.equal(errors.length, 1, 'one line even though the broken file was read twice');
    t.match(errors[0]!.msg, /^devices file .*devices\.json:1:\d+: cannot parse: .*; keeping the current assignments$/);
    t.equal(s1.running().length, 2, 'workers untouched');
    file.write([{ id: 'x' }, { id: 'x' }]);
    await until('the duplicate reported', () => lines.filter((l) => l.level === 'error').length === 2);
    t.match(lines.filter((l) => l.level === 'error')[1]!.msg, /\[1\]\.id: "x" is listed twice/);
    file.write(devices(3));
    await until('a good list applies again', () => s1.running().length === 3);

    const bad = deviceFile('not a list', 'devices.yaml');
    await t.rejects(startManager(backend, prefix(), 'm9', { devices: bad.path }), /^devices file .*devices\.yaml: expected a list of devices \(or \{"devices": \[\.\.\.\]\}\), got string "not a list"$/);
  }));

t.test('bad input: a 1 MB id and other bad ids or configs are refused with one error each, the current assignments kept', (t) =>
  scope(async (track) => {
    recordEvents();
    const p = prefix();
    const good = devices(3);
    const file = deviceFile(good);
    const lines: Parameters<typeof startSlave>[4] = [];
    const s1 = track(await startSlave(backend, p, 's1'));
    track(await startManager(backend, p, 'm1', { devices: file.path }, lines));
    await until('three running', () => s1.running().length === 3);
    const ctx = roleCtx(backend, p, {});
    const before = await backend.send(['HGETALL', ctx.keys.workers({ name: 's1' })]);
    const cases: [unknown, RegExp][] = [
      [{ id: 'x'.repeat(1024 * 1024) }, /\[3\]\.id: expected an obniz id \(NNNN-NNNN\) or an id of 1 to 64 letters, digits, '\.', '_' or '-', got a string of 1048576 characters \("x{20}…"\); keeping the current assignments$/],
      [{ id: 'y'.repeat(65) }, /\[3\]\.id: expected an obniz id .*, got a string of 65 characters/],
      [{ id: 'a/b' }, /\[3\]\.id: expected an obniz id .*, got string "a\/b"/],
      [{ id: 'tab\there' }, /\[3\]\.id: expected an obniz id .*, got string "tab\\there"/],
      [{ id: '' }, /\[3\]\.id: expected an obniz id .*, got string ""/],
      [{ id: 42 }, /\[3\]\.id: expected an obniz id .*, got number 42/],
      [{ id: '0000-0009', configs: { blob: 'z'.repeat(70 * 1024) } }, /\[3\]\.configs: expected at most 64 KiB of JSON text, got 71 KiB/],
      [{ id: '0000-0009', hardware: 'h'.repeat(100) }, /\[3\]\.hardware: expected text of at most 64 characters/],
    ];
    for (const [i, [bad, message]] of cases.entries()) {
      file.write([...good, bad]);
      const errors = await until(`case ${i}: one error`, () => {
        const found = lines.filter((l) => l.level === 'error');
        return found.length === i + 1 ? found : undefined;
      }, 10_000);
      t.match(errors[i]!.msg, message, `case ${i}: one line naming where and what`);
      t.ok(errors[i]!.msg.length < 400, `case ${i}: the line is short (${errors[i]!.msg.length} characters), not the 1 MB id`);
    }
    t.same(await backend.send(['HGETALL', ctx.keys.workers({ name: 's1' })]), before, 'the assignments are untouched');
    t.same(s1.running().sort(), good.map((d) => d.id), 'the workers keep running');
    t.equal(await backend.send(['HLEN', ctx.keys.deviceIndex()]), 3, 'nothing new indexed');
  }));

t.test('a second manager on the same Redis with a one-device list does not remove the fleet (maxRemoveShare); with the guard off it does', (t) =>
  scope(async (track) => {
    recordEvents();
    const p = prefix();
    const fleet = devices(12);
    const s1 = track(await startSlave(backend, p, 's1'));
    const first = track(await startManager(backend, p, 'm1', { devices: deviceFile(fleet).path }));
    await until('twelve running', () => s1.running().length === 12);
    const lines: Parameters<typeof startSlave>[4] = [];
    const second = track(await startManager(backend, p, 'm2', { devices: deviceFile(fleet.slice(0, 1)).path }, lines));
    const refusal = lines.find((l) => l.level === 'error');
    t.match(refusal?.msg, /^the device list would remove 11 of the 12 assigned devices, more than maxRemoveShare \(0\.5\): refused, the devices stay assigned \(check the list; to remove them anyway set obniz\.maxRemoveShare=1\)$/);
    t.same(second.lastSync, { added: 0, updated: 0, removed: 0, waiting: 0 }, 'nothing removed');
    await second.syncNow();
    t.equal(lines.filter((l) => l.level === 'error').length, 1, 'logged once while the list stays the same');
    t.equal(await backend.send(['HLEN', roleCtx(backend, p, {}).keys.workers({ name: 's1' })]), 12, 'the fleet is still assigned');
    t.equal(s1.running().length, 12);
    await second.stop();
    await first.stop();

    // a small removal under the share applies as before; the guard off removes what the list says
    const trimmed = track(await startManager(backend, p, 'm3', { devices: deviceFile(fleet.slice(0, 8)).path }));
    t.same(trimmed.lastSync, { added: 0, updated: 0, removed: 4, waiting: 0 }, '4 of 12: under the share');
    await trimmed.stop();
    const off = track(await startManager(backend, p, 'm4', { devices: deviceFile(fleet.slice(0, 1)).path, maxRemoveShare: 1 }));
    t.same(off.lastSync, { added: 0, updated: 0, removed: 7, waiting: 0 }, 'maxRemoveShare 1: the list is obeyed');
    await until('one running', () => s1.running().length === 1);
  }));

t.test('bad input: a worker module that does not load is one clear error and the slave does not start', async (t) => {
  const p = prefix();
  await t.rejects(startSlave(backend, p, 'b1', { worker: join(fixtures, 'broken-worker.mjs') }), {
    message: /^cannot load worker .*broken-worker\.mjs: SyntaxError: Unexpected token ';' \(at .*broken-worker\.mjs:4:\d+\)$/,
  });
  await t.rejects(startSlave(backend, p, 'b2', { worker: join(fixtures, 'nope.mjs') }), { message: /^cannot load worker .*nope\.mjs: no such file$/ });
  await t.rejects(startSlave(backend, p, 'b3', { worker: join(fixtures, 'no-default-worker.mjs') }), { message: /has no default export/ });
  await t.rejects(startSlave(backend, p, 'b4', { worker: undefined }), { message: /^obniz\.worker is not set/ });
  const ctx = roleCtx(backend, p, {});
  t.same(await backend.send(['ZRANGE', ctx.keys.slaveIndex(), 0, -1]), [], 'none of them beat: no device is ever assigned to them');
});

t.test('a failing onStart is logged and the device is retried later; the other workers start', (t) =>
  scope(async (track) => {
    recordEvents();
    const p = prefix();
    const file = deviceFile([...devices(2), { id: 'fails-1', configs: { failStart: true } }]);
    const lines: Parameters<typeof startSlave>[4] = [];
    const s1 = track(await startSlave(backend, p, 's1', {}, lines));
    track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('two running', () => s1.running().length === 2);
    await until('an error', () => lines.some((l) => l.level === 'error'));
    t.same(lines.filter((l) => l.level === 'error').map((l) => l.msg), ['worker fails-1: onStart failed: cannot start fails-1']);
    const ctx = roleCtx(backend, p, {});
    t.equal(await backend.send(['HGET', ctx.keys.claims(), 'fails-1']), null, 'its claim went back');
  }));

t.test('device connections: the stand-in device class connects (onObnizConnect, onObnizLoop); an unreachable device does not hang a stop', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    (globalThis as { __obnizDeviceLoops?: Map<string, number> }).__obnizDeviceLoops = new Map();
    const instances: { id: string; options: Record<string, unknown> }[] = [];
    (globalThis as { __fakeObniz?: unknown[] }).__fakeObniz = instances;
    const p = prefix();
    const file = deviceFile([{ id: 'online-1' }, { id: 'offline-1' }]);
    const s1 = track(await startSlave(backend, p, 's1', { obniz: 'on', obnizModule: join(fixtures, 'fake-obniz.mjs'), appToken: 'app-token-1' }));
    track(await startManager(backend, p, 'm1', { devices: file.path }));
    await until('online-1 connected', () => events.some((e) => e.ev === 'connect' && e.id === 'online-1'));
    const deviceLoops = (globalThis as unknown as { __obnizDeviceLoops: Map<string, number> }).__obnizDeviceLoops;
    await until('onObnizLoop runs', () => (deviceLoops.get('online-1') ?? 0) >= 3);
    t.equal(instances[0]!.options.access_token, 'app-token-1', 'the app token is the device access token');
    t.equal(instances[0]!.options.auto_connect, false);
    t.notOk(events.some((e) => e.ev === 'connect' && e.id === 'offline-1'), 'offline-1 never connects');
    const started = Date.now();
    await s1.stop('test');
    t.ok(Date.now() - started < 2000, `stopped in ${Date.now() - started} ms with an unreachable device (closeTimeout 0.3 s)`);
    t.same(events.filter((e) => e.ev === 'end').map((e) => e.id).sort(), ['offline-1', 'online-1'], 'onEnd ran for both');
    t.ok(events.some((e) => e.ev === 'close' && e.id === 'online-1'), 'onObnizClose for the reachable one');
  }));

t.test('Redis restarts empty: every device runs again, on one slave each, never two at once', (t) =>
  scope(async (track) => {
    const events = recordEvents();
    const own = await startRedis();
    const b = await createBackend({ url: own.url });
    t.teardown(async () => {
      await b.close();
      await own.stop();
    });
    const p = prefix();
    const file = deviceFile(devices(6));
    const s1 = track(await startSlave(b, p, 's1'));
    const s2 = track(await startSlave(b, p, 's2'));
    track(await startManager(b, p, 'm1', { devices: file.path }));
    await until('six running', () => s1.running().length + s2.running().length === 6);
    const restartedAt = Date.now();
    await own.restart();
    await until('six running again', async () => (await b.send(['HLEN', roleCtx(b, p, {}).keys.claims()]).catch(() => 0)) === 6 && s1.running().length + s2.running().length === 6, 20_000);
    const after = events.filter((e) => e.t >= restartedAt);
    t.ok(true, `all six ran again ${Date.now() - restartedAt} ms after the restart (${after.filter((e) => e.ev === 'end').length} stopped, ${after.filter((e) => e.ev === 'start').length} started meanwhile)`);
    t.same([...s1.running(), ...s2.running()].sort(), devices(6).map((d) => d.id), 'each once');
    t.same(overlaps(events), [], 'never on two slaves at once');
  }));
