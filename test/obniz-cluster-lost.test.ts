// An obniz manager and slave on ioredis with their whole Redis Cluster gone
// for good (every node killed -9), with the fault test's timings (watchInterval
// and claimRetryInterval 0.2 s). ioredis 5.11 re-picked the node of a cluster's
// pub/sub connection with no pause (a refused pick ends at once and picks
// again), each pick adding a listener to the dead socket of the last one: a
// manager at 91% CPU, 4.1 GB RSS in an hour. The picks are now paced like every
// reconnect (adapters/ioredis-cluster-subscriber.ts). Asserted on counts the
// pacing allows, which a slow machine only lowers: the picks in a window, and
// the listeners on the dead socket — not a CPU share.
import { createRequire } from 'node:module';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { devices, deviceFile, startManager, startSlave } from './support/obniz.ts';
import { startHaCluster } from './support/redis-ha.ts';

interface Picker {
  lastActiveSubscriber?: { status: string; stream?: { listenerCount(event: string): number } } | null;
  selectSubscriber(): void;
}

// ioredis's ClusterSubscriber (its private class): each of its picks is counted, per cluster connection.
const { default: ClusterSubscriber } = createRequire(import.meta.url)('ioredis/built/cluster/ClusterSubscriber.js') as { default: { prototype: Picker } };
const picks = new Map<Picker, number>();
/** Per connection, the 'close' listeners on the socket of its last subscriber that worked, at each pick once that one has ended. */
const deadSocketListeners = new Map<Picker, number[]>();
let counting = false;
const select = ClusterSubscriber.prototype.selectSubscriber;
ClusterSubscriber.prototype.selectSubscriber = function (this: Picker) {
  if (counting) {
    picks.set(this, (picks.get(this) ?? 0) + 1);
    const last = this.lastActiveSubscriber;
    if (last?.status === 'end' && last.stream) deadSocketListeners.set(this, [...(deadSocketListeners.get(this) ?? []), last.stream.listenerCount('close')]);
  }
  select.call(this);
};
t.teardown(() => {
  ClusterSubscriber.prototype.selectSubscriber = select;
});

const WINDOW_MS = 12_000;
/**
 * Picks the pacing allows in WINDOW_MS: reconnects at 0, 0.1, 0.2, 0.4 … 5 s
 * (8 start within 12 s), up to 3 picks each (the cluster's own reconnect adds
 * its nodes back, starts its subscriber, and drops the nodes again), and room
 * for a few more; with no pause one connection picked thousands of times.
 */
const MAX_PICKS = 30;

t.test('the whole cluster lost: each pub/sub connection re-picks its node with pauses, and the dead socket collects no listeners', async (t) => {
  const cluster = await startHaCluster();
  const backend = await createBackend({ url: cluster.url, adapter: 'ioredis' });
  const prefix = '{obniz-lost}:';
  const timing = { claimRetryInterval: 0.2, watchInterval: 0.2, healthCheckInterval: 1, syncInterval: 60 };
  const slave = await startSlave(backend, prefix, 'lost-s1', timing);
  const file = deviceFile(devices(20));
  const manager = await startManager(backend, prefix, 'lost-m1', { ...timing, devices: file.path });
  t.teardown(async () => {
    // Closing the backend first fails the calls still waiting for the cluster, so the roles can stop.
    await backend.close().catch(() => {});
    await Promise.allSettled([manager.stop(), slave.stop('test over')]);
    await cluster.stop().catch(() => {});
  });
  t.ok(manager.lastSync, 'the manager synced before the loss');

  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));

  counting = true;
  await cluster.stop();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  counting = false;

  const counts = [...picks.values()];
  const listeners = [...deadSocketListeners.values()];
  t.comment(`picks per cluster connection in ${WINDOW_MS / 1000} s with the cluster gone: ${counts.join(', ') || 'none'}; listeners on a dead socket from the first pick to the last: ${listeners.map((l) => `${l[0]}…${l.at(-1)}`).join(', ')}`);
  t.ok(listeners.length >= 2, 'the slave\'s and the manager\'s pub/sub connections both lost their node and picked again');
  t.ok(Math.max(...counts) <= MAX_PICKS, `each connection picked at most ${MAX_PICKS} times (paced), not in a loop`);
  t.same(listeners.map((l) => Math.max(...l) - Math.min(...l)), listeners.map(() => 0), 'no listener piles up on the socket of the last subscriber that worked');
  t.same(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')), [], 'no listener-leak warning');
});
