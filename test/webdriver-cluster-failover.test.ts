// The WebDriver grid through a failover of its Redis, the master killed -9
// and a replica promoted: a Redis Cluster with replicas (the master holding
// the deployments' hash-tag slot) and Sentinel (a master, its replica, 3
// sentinels); on each, a deployment per adapter goes through the same
// failover side by side. On each adapter a new session is served within 15 s of the
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

t.test('Cluster, both adapters through one failover: a new session within 15 s of the promotion; /status not ready while it cannot serve', async (t) => {
  const cluster = await startHaCluster();
  t.teardown(() => cluster.stop());
  // one hash tag: both deployments' keys live on the master killed
  await webdriverThroughFailover(t, { url: cluster.url, failover: () => cluster.failover('{wd}x') }, { ioredis: '{wd}i:', 'node-redis': '{wd}n:' }, page);
});

t.test('Sentinel, both adapters through one failover: a new session within 15 s of the promotion; /status not ready while it cannot serve', async (t) => {
  const sentinels = await startSentinels();
  t.teardown(() => sentinels.stop());
  await webdriverThroughFailover(t, sentinels, { ioredis: '{wi}:', 'node-redis': '{wn}:' }, page);
});
