// A plugin's contract suite on every adapter: embedded, ioredis and node-redis
// on one redis-server, and both clients on a 3-master Redis Cluster (the suite's
// hash-tag prefix puts every script call in one slot).
import type { Test } from 'tap';
import { createBackend } from '../../adapters/index.ts';
import type { Plugin } from '../../core/plugin.ts';
import { contractSuite } from '../../conformance/contract-suite.ts';
import { startCluster, startRedis } from './redis.ts';

// Returns the single server's URL so a caller can run more checks against it.
export async function contractOnAllAdapters(t: Test, plugin: Plugin): Promise<{ redisUrl: string }> {
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
  return { redisUrl: redis.url };
}
