// The roles on a Redis Cluster, under a hash-tag prefix so every key of the
// deployment shares one slot: devices spread and start, requests travel over
// pub/sub, relocate-all balances, a clean stop hands devices over — with
// ioredis and with node-redis.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { deviceFile, devices, overlaps, recordEvents, startManager, startSlave } from './support/obniz.ts';
import { until } from './support/until.ts';
import { startCluster } from './support/redis.ts';

const cluster = await startCluster();
t.teardown(() => cluster.stop());

for (const adapter of ['ioredis', 'node-redis']) {
  t.test(`on a cluster with ${adapter}`, async (t) => {
    const events = recordEvents();
    const backend = await createBackend({ url: cluster.url, adapter });
    const prefix = `{obniz-${adapter}}:`;
    const file = deviceFile(devices(8));
    const s1 = await startSlave(backend, prefix, 's1');
    const manager = await startManager(backend, prefix, 'm1', { devices: file.path });
    const s2 = await startSlave(backend, prefix, 's2');
    t.teardown(async () => {
      await manager.stop();
      await s2.stop('done');
      await backend.close();
    });
    await until('all eight on s1 (the only slave at the first sync)', () => s1.running().length === 8);
    t.same((await manager.doAllRelocate()).counts, { s1: 4, s2: 4 });
    await until('four and four', () => s1.running().length === 4 && s2.running().length === 4);
    const answers = await manager.request('ping');
    t.equal(Object.keys(answers).length, 8, 'every worker answered over pub/sub');
    await s1.stop('test');
    await until('s2 took s1\'s four', () => s2.running().length === 8);
    t.same(overlaps(events), [], 'never on two slaves');
  });
}
