// The Playwright grid through a failover of its Redis, the master killed -9
// and a replica promoted, while Playwright clients keep connecting: a Redis
// Cluster with replicas (the master holding the deployments' hash-tag slot),
// and Sentinel (a master, its replica, 3 sentinels). On each, a deployment
// per adapter goes through the same failover side by side, so a loaded
// machine slows both alike. The 503s are counted and their window measured.
// While there is no master (kill to promotion, ~5 s) a client gets a 503 on
// both adapters once the proxy's Redis deadline passes; what differs is how
// long the 503s go on after the promotion: on a Cluster node-redis said the
// whole cluster was lost when one node was, and answered every client 503
// until its slot map was read again (issue 30). Its 503s must end no later
// after the promotion than ioredis's (2 s of slack and 2 s more for a loaded
// machine: the bug was ~5 s). Separate coord processes, real Chromium
// (test/support/grid-failover.ts).
import t, { type Test } from 'tap';
import { buildIfStale } from './support/build.ts';
import { checkAttempts, clientsThroughFailover, type HaRedis, noLongerThanIoredis } from './support/grid-failover.ts';
import { startHaCluster, startSentinels } from './support/redis-ha.ts';

buildIfStale();

/** Both adapters' deployments through one failover of `ha`: only 503s failed, and node-redis's ended no later than ioredis's. */
async function bothThroughFailover(t: Test, ha: HaRedis, prefixes: Record<'ioredis' | 'node-redis', string>): Promise<void> {
  const { attempts, failover } = await clientsThroughFailover(t, ha, prefixes);
  const after: Record<string, number> = {};
  for (const adapter of Object.keys(prefixes)) after[adapter] = checkAttempts(t, adapter, attempts[adapter]!, failover);
  noLongerThanIoredis(t, after);
}

t.test('Cluster, both adapters through one failover: clients connecting; node-redis answers 503 after the promotion no longer than ioredis', async (t) => {
  const cluster = await startHaCluster();
  t.teardown(() => cluster.stop());
  // one hash tag: both deployments' keys live on the master killed
  await bothThroughFailover(t, { url: cluster.url, failover: () => cluster.failover('{bg}x') }, { ioredis: '{bg}i:', 'node-redis': '{bg}n:' });
});

t.test('Sentinel, both adapters through one failover: clients connecting; node-redis answers 503 after the promotion no longer than ioredis', async (t) => {
  const sentinels = await startSentinels();
  t.teardown(() => sentinels.stop());
  await bothThroughFailover(t, sentinels, { ioredis: '{bi}:', 'node-redis': '{bn}:' });
});
