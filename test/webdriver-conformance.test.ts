// webdriver's contract on every adapter: its scenarios leave a keyspace that
// matches seed 002's layout (plus coord's extensions), on ioredis, node-redis
// and embedded, and on a Redis Cluster under a hash-tag prefix (every call in one slot).
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { contractSuite } from '../conformance/contract-suite.ts';
import plugin from '../plugins/webdriver/index.ts';
import { startCluster, startRedis } from './support/redis.ts';

const redis = await startRedis();
const cluster = await startCluster();
t.teardown(async () => {
  await redis.stop();
  await cluster.stop();
});

const targets = [
  { name: 'embedded', url: undefined, adapter: 'embedded' },
  { name: 'ioredis', url: redis.url, adapter: 'ioredis' },
  { name: 'node-redis', url: redis.url, adapter: 'node-redis' },
  { name: 'ioredis on a cluster', url: cluster.url, adapter: 'ioredis' },
  { name: 'node-redis on a cluster', url: cluster.url, adapter: 'node-redis' },
];
for (const target of targets) {
  await t.test(target.name, (t) => contractSuite(t, { plugin, name: target.name, make: () => createBackend({ url: target.url, adapter: target.adapter }) }));
}
