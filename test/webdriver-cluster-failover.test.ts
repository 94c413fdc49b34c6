// The WebDriver grid through a failover of its Redis, the master killed -9
// and a replica promoted: a Redis Cluster with replicas (the master holding
// the deployment's hash-tag slot), one adapter at a time, and Sentinel (a
// master, its replica, 3 sentinels), both adapters side by side through the
// same failover. On each adapter a new session is served within 10 s of the
// promotion, and /status never says ready while the grid cannot serve (it
// did on node-redis, for good: issue 30). Separate coord processes, a real
// chromedriver and Chromium (test/support/grid-failover.ts).
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { webdriverThroughFailover } from './support/grid-failover.ts';
import { startPage } from './support/page.ts';
import { startHaCluster, startSentinels } from './support/redis-ha.ts';

buildIfStale();
const page = await startPage();
t.teardown(() => page.close());

for (const adapter of ['ioredis', 'node-redis']) {
  t.test(`Cluster, ${adapter}: a new session within 10 s of the promotion; /status not ready while it cannot serve`, async (t) => {
    const cluster = await startHaCluster();
    t.teardown(() => cluster.stop());
    const prefix = '{wd}:';
    await webdriverThroughFailover(t, { url: cluster.url, failover: () => cluster.failover(`${prefix}x`) }, { [adapter]: prefix }, page);
  });
}

t.test('Sentinel, both adapters through one failover: a new session within 10 s of the promotion; /status not ready while it cannot serve', async (t) => {
  const sentinels = await startSentinels();
  t.teardown(() => sentinels.stop());
  await webdriverThroughFailover(t, sentinels, { ioredis: '{wi}:', 'node-redis': '{wn}:' }, page);
});
