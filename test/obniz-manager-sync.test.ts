// The manager's sync path at scale: install fingerprints (what the manager keeps
// per device instead of the entry), a sync with nothing changed that reads only
// the file's version and the lists' stamps, and the full read every
// FULL_READ_EVERY syncs that catches an install rewritten in place without a
// stamp (as an obniz-app-sdk manager does).
import t, { type Test } from 'tap';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { fingerprint, installFingerprint } from '../plugins/obniz/fingerprint.ts';
import { FULL_READ_EVERY } from '../plugins/obniz/list-cache.ts';
import { touchSlave } from '../plugins/obniz/scripts.ts';
import { deviceFile, devices, roleCtx, startManager } from './support/obniz.ts';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
const backend: Backend = await createBackend({ url: redis.url });
t.teardown(async () => {
  await backend.close();
  await redis.stop();
});

/** A manager whose first sync put 4 devices on slave s1 (its list's key). */
async function fourDevicesOnOneSlave(t: Test, prefix: string) {
  const ctx = roleCtx(backend, prefix, {});
  await touchSlave(ctx, 's1');
  const file = deviceFile(devices(4));
  const manager = await startManager(backend, prefix, 'm1', { devices: file.path });
  t.teardown(() => manager.stop());
  t.same(manager.lastSync, { added: 4, updated: 0, removed: 0, waiting: 0 }, 'the first sync assigns');
  return { file, manager, key: ctx.keys.workers({ name: 's1' }) };
}

t.test('an entry\'s install fingerprint is its install text\'s; an entry of another shape has none', async (t) => {
  const install = JSON.stringify({ id: '0001-0000', hardware: 'obnizb1', configs: '{"instanceName":"x"}', nested: { instanceName: 'y' } });
  const entry = `{"install":${install},"instanceName":"s1","updatedMillisecond":1700000000000}`;
  t.equal(installFingerprint(entry), fingerprint(install), 'coord\'s and the SDK\'s shape: the install\'s text');
  t.not(fingerprint(install), fingerprint(install.replace('obnizb1', 'obnizb2')), 'a changed install, another fingerprint');
  t.equal(installFingerprint(`{"instanceName":"s1","install":${install},"updatedMillisecond":1}`), undefined, 'the SDK\'s Lua re-encoding: compared in full');
  t.equal(installFingerprint('{"install":1}'), undefined, 'no tail');
  t.ok(Number.isSafeInteger(fingerprint('x')) && fingerprint('x') >= 0, 'a safe integer');
});

t.test('a sync with nothing changed reads only versions and stamps; an install rewritten in place is seen at the next full read', async (t) => {
  const { file, manager, key } = await fourDevicesOnOneSlave(t, '{sync1}:');
  const entry = (await backend.send(['HGET', key, '0000-0000'])) as string;
  // as an SDK manager updates an install: in place, no stamp, same length
  const rewritten = entry.replace('"configs":"{\\"n\\":0}"', '"configs":"{\\"n\\":99}"');
  t.not(rewritten, entry);
  await backend.send(['HSET', key, '0000-0000', rewritten]);
  const before = await backend.send(['INFO', 'commandstats']);
  await manager.syncNow();
  const after = await backend.send(['INFO', 'commandstats']);
  const calls = (text: unknown, cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(String(text))?.[1] ?? 0);
  t.equal(calls(after, 'hgetall') - calls(before, 'hgetall'), 0, 'nothing changed: no list read');
  t.same(manager.lastSync, { added: 0, updated: 0, removed: 0, waiting: 0 });
  for (let i = 2; i < FULL_READ_EVERY; i++) await manager.syncNow();
  t.equal(await backend.send(['HGET', key, '0000-0000']), rewritten, 'not seen before the full read');
  await manager.syncNow();
  t.same(manager.lastSync, { added: 0, updated: 1, removed: 0, waiting: 0 }, 'the full read sees it and writes the list\'s install back');
  t.match(await backend.send(['HGET', key, '0000-0000']), /\\"n\\":0\}/);

  file.write([...devices(4), ...devices(1, 4)]);
  await manager.syncNow();
  t.same(manager.lastSync, { added: 1, updated: 0, removed: 0, waiting: 0 }, 'a changed file is read and diffed');
});

t.test('a device swapped for another in a list, no stamp and the same length, is seen at the next full read', async (t) => {
  const { manager, key } = await fourDevicesOnOneSlave(t, '{sync2}:');
  await manager.syncNow();
  // as another writer might: one device out, one the file does not name in, the list as long
  const entry = (await backend.send(['HGET', key, '0001-0000'])) as string;
  await backend.send(['HDEL', key, '0001-0000']);
  await backend.send(['HSET', key, '0009-0000', entry.replaceAll('0001-0000', '0009-0000')]);
  for (let i = 2; i < FULL_READ_EVERY; i++) await manager.syncNow();
  t.equal(await backend.send(['HEXISTS', key, '0001-0000']), 0, 'not seen before the full read');
  await manager.syncNow();
  t.same(manager.lastSync, { added: 1, updated: 0, removed: 1, waiting: 0 }, 'the full read puts the device back and takes the other out');
  t.equal(await backend.send(['HEXISTS', key, '0001-0000']), 1);
  t.equal(await backend.send(['HEXISTS', key, '0009-0000']), 0);
});
