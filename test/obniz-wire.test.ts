// Wire compatibility with obniz-app-sdk 1.5, with the SDK's side played by
// support/obniz-sdk.ts and plain Redis commands as the SDK does it (bare keys,
// no prefix): a coord manager finds an SDK slave by its heartbeat, assigns it
// devices, and its synchronize / keyRequest envelopes are the SDK's; a coord
// slave runs devices an SDK manager assigned (updatedMillisecond in seconds) and
// answers the SDK manager's keyRequest on its own channel.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend, PubSubMessage } from '../core/backend.ts';
import { deviceFile, devices, recordEvents, startManager, startSlave } from './support/obniz.ts';
import { until } from './support/until.ts';
import { SdkManager, SdkSlave } from './support/obniz-sdk.ts';
import { startRig } from './support/rig.ts';

const { redis, backend, atEnd } = await startRig(t, 'obniz');
/** The SDK's own timings: heartbeat every 10 s with EX 20, dead after 30 s. */
const sdkTimings = { heartbeatInterval: 10, heartbeatTtl: 20, deadAfter: 30, healthCheckInterval: 10 };
/** The SDK's own connection. */
const sdk: Backend = await createBackend({ url: redis.url });
atEnd(() => sdk.close());

/** Everything published on app* as an SDK manager sees it. */
async function listen(): Promise<{ messages: PubSubMessage[]; close(): Promise<void> }> {
  const sub = await sdk.subscriber();
  const messages: PubSubMessage[] = [];
  sub.onMessage((m) => messages.push(m));
  await sub.psubscribe('app*');
  return { messages, close: () => sub.close() };
}

t.test('a coord manager and an SDK slave: found by its heartbeat, given devices in the SDK format, asked over the SDK envelope', async (t) => {
  await sdk.send(['FLUSHALL']);
  const app = await listen();
  // the SDK slave (support/obniz-sdk.ts): heartbeat Date.now() ms with EX 20; SUBSCRIBE app and app.{name}
  const sdkSlave = await new SdkSlave(sdk, 'sdk-s1').start();
  const received = sdkSlave.received as { channel: string; message: any }[];

  const file = deviceFile(devices(4));
  const manager = await startManager(backend, '', 'm1', { devices: file.path, ...sdkTimings });
  t.teardown(async () => {
    await manager.stop();
    await sdkSlave.kill();
    await app.close();
  });
  const list = (await sdk.send(['HGETALL', 'workers:sdk-s1'])) as string[];
  t.equal(list.length, 8, 'the SDK slave (found by SCAN, not in any index) got all 4 devices');
  const entry = JSON.parse(list[1]!);
  t.same(Object.keys(entry), ['install', 'instanceName', 'updatedMillisecond'], 'the SDK entry shape');
  t.equal(entry.instanceName, 'sdk-s1');
  t.ok(Math.abs(entry.updatedMillisecond - Date.now()) < 5000, 'updatedMillisecond in ms');
  t.same(entry.install, devices(4).find((d) => d.id === list[0]), 'install is the device as listed');

  await until('synchronize reached the SDK slave', () => received.some((r) => r.message.action === 'synchronize'));
  const sync = received.find((r) => r.message.action === 'synchronize')!;
  t.equal(sync.channel, 'app');
  t.same(sync.message, { action: 'synchronize', info: { sendMode: 'broadcast', toManager: false, from: 'm1' }, body: { syncType: 'redis' } }, 'exactly the SDK envelope');

  const answers = await manager.request('temp');
  t.same(answers, Object.fromEntries(devices(4).map((d) => [d.id, `sdk:temp:${d.id}`])), 'app.request gathers the SDK slave\'s answer');
  const ask = received.find((r) => r.message.action === 'keyRequest')!;
  t.same(ask.message.info, { sendMode: 'broadcast', toManager: false, from: 'm1' });
  t.same(Object.keys(ask.message.body).sort(), ['key', 'requestId']);
  const direct = await manager.directRequest(devices(1)[0]!.id, 'one');
  t.same(direct, Object.fromEntries(devices(4).map((d) => [d.id, `sdk:one:${d.id}`])), 'directRequest goes to app.sdk-s1 (the SDK slave answers for all it runs)');
  const directAsk = received.filter((r) => r.message.action === 'keyRequest')[1]!;
  t.equal(directAsk.channel, 'app.sdk-s1');
  t.same(directAsk.message.info, { sendMode: 'direct', to: 'sdk-s1', toManager: false, from: 'm1' });
  t.equal(directAsk.message.body.obnizId, devices(1)[0]!.id);

  t.equal(await sdk.send(['GET', 'master:m1:heartbeat']).then((v) => Math.abs(Number(v) - Date.now()) < 5000), true, 'manager heartbeat in ms');
  const ttl = (await sdk.send(['TTL', 'master:m1:heartbeat'])) as number;
  t.ok(ttl >= 19 && ttl <= 20, `manager heartbeat EX 20 (TTL now ${ttl})`);

});

t.test('a coord slave and an SDK manager: runs what the SDK assigned (seconds, no status), answers its keyRequest as an SDK slave would', async (t) => {
  await sdk.send(['FLUSHALL']);
  const events = recordEvents();
  const app = await listen();
  const slave = await startSlave(backend, '', 'c1', sdkTimings);
  t.teardown(async () => {
    await slave.stop('done');
    await app.close();
  });
  const beat = (await sdk.send(['GET', 'slave:c1:heartbeat'])) as string;
  t.match(beat, /^\d{13}$/, 'heartbeat is Date.now() in ms');
  const ttl = (await sdk.send(['TTL', 'slave:c1:heartbeat'])) as number;
  t.ok(ttl >= 19 && ttl <= 20, `EX 20 (TTL now ${ttl})`);

  // the SDK manager's own Lua assigns it (1.5: cjson-encoded, updatedMillisecond as Unix seconds, no status field)
  const install = { id: 'sdk-dev-1', hardware: 'obnizb1', configs: '{"a":1}' };
  t.equal(await new SdkManager(sdk, 'sdk-m').autoCreate(install.id, install), 'c1', 'the only slave with a heartbeat');
  const entry = JSON.parse((await sdk.send(['HGET', 'workers:c1', install.id])) as string);
  t.match(entry, { install, instanceName: 'c1', updatedMillisecond: /^\d{10}$/ });
  t.notOk('status' in entry);
  await sdk.send(['PUBLISH', 'app', JSON.stringify({ action: 'synchronize', info: { sendMode: 'broadcast', toManager: false, from: 'sdk-m' }, body: { syncType: 'redis' } })]);
  await until('the coord slave runs the SDK-assigned device', () => slave.running().includes(install.id));
  t.same(events.filter((e) => e.id === install.id).map((e) => e.ev), ['install', 'start'], 'new to the fleet: onInstall, though the SDK manager marks nothing, then onStart');

  await sdk.send(['PUBLISH', 'app', JSON.stringify({ action: 'keyRequest', info: { sendMode: 'broadcast', toManager: false, from: 'sdk-m' }, body: { requestId: 'r-1', key: 'status' } })]);
  await until('an answer', () => app.messages.some((m) => m.message.includes('keyRequestResponse')));
  const answer = app.messages.find((m) => m.message.includes('keyRequestResponse'))!;
  t.equal(answer.channel, 'app.c1', 'on the slave\'s own channel, as SDK slaves answer');
  t.same(JSON.parse(answer.message), {
    action: 'keyRequestResponse',
    info: { sendMode: 'direct', to: 'sdk-m', toManager: true, from: 'c1' },
    body: { requestId: 'r-1', results: { [install.id]: 'status:sdk-dev-1:c1' } },
  });

  await sdk.send(['PUBLISH', 'app.c1', JSON.stringify({ action: 'reportRequest', info: { sendMode: 'direct', to: 'c1', toManager: false, from: 'sdk-m' }, body: {} })]);
  await until('a report', () => app.messages.some((m) => m.message.includes('"report"')));
  t.same(JSON.parse(app.messages.find((m) => m.message.includes('"report"'))!.message).body, { installIds: [install.id] });

  // a message to another slave, and traffic that is not an SDK envelope, are ignored
  await sdk.send(['PUBLISH', 'app', 'not json']);
  await sdk.send(['HDEL', 'workers:c1', install.id]);
  await sdk.send(['PUBLISH', 'app.c1', JSON.stringify({ action: 'synchronize', info: { sendMode: 'direct', to: 'someone-else', toManager: false, from: 'sdk-m' }, body: { syncType: 'redis' } })]);
  await new Promise((r) => setTimeout(r, 300));
  t.ok(slave.running().includes(install.id), 'a synchronize for another slave is not ours');
  await sdk.send(['PUBLISH', 'app', JSON.stringify({ action: 'synchronize', info: { sendMode: 'broadcast', toManager: false, from: 'sdk-m' }, body: { syncType: 'redis' } })]);
  await until('removed by the SDK manager: stopped', () => events.some((e) => e.id === install.id && e.ev === 'end'));
  t.same(events.filter((e) => e.id === install.id).map((e) => e.ev), ['install', 'start', 'uninstall', 'end'], 'in no list any more: onUninstall, then onEnd');

  // moved by the SDK manager between two coord slaves: no onUninstall, no onInstall; removed there: onUninstall
  const moving = { id: 'sdk-dev-2', hardware: 'obnizb1', configs: '{}' };
  const sdkManager = new SdkManager(sdk, 'sdk-m');
  t.equal(await sdkManager.autoCreate(moving.id, moving), 'c1');
  await sdkManager.synchronize();
  await until('c1 runs it', () => slave.running().includes(moving.id));
  const c2 = await startSlave(backend, '', 'c2', sdkTimings);
  t.teardown(() => c2.stop('done'));
  t.equal(await sdkManager.autoRelocate(moving.id, true), 'c2');
  await sdkManager.synchronize();
  await until('c2 runs it', () => c2.running().includes(moving.id));
  t.same(events.filter((e) => e.id === moving.id).map((e) => `${e.ev}@${e.slave}`), ['install@c1', 'start@c1', 'end@c1', 'start@c2'], 'a move: onEnd and onStart only');
  await sdk.send(['HDEL', 'workers:c2', moving.id]);
  await sdkManager.synchronize();
  await until('removed from c2', () => events.some((e) => e.id === moving.id && e.ev === 'end' && e.slave === 'c2'));
  t.same(events.filter((e) => e.id === moving.id).map((e) => `${e.ev}@${e.slave}`).slice(4), ['uninstall@c2', 'end@c2']);
});
