// A node-redis cluster connection reads its slot map again every second while
// one of its nodes cannot be reached, until every node it uses answers.
// @redis/client refreshes the map by itself only for a node client that had
// been ready, and only 5 s after its first reconnection attempt. A connection
// opened while a master is down (a blocking or pub/sub connection reopened
// after the failure) maps that master's slots to the dead node, whose client
// retries its first connect forever without ever refreshing: every command for
// those slots then waits forever, and a manager's BLPOP loop with it (issue
// 30). Once the map names the promoted replica, the library destroys the dead
// node's client, the commands waiting on it fail, and the caller's retry goes
// to the new master.
import type { ClusterClient } from './node-redis-connection.ts';

/** How often the slot map is read again while a node is unreachable (the cluster promotes a replica within its node timeout, a few seconds). */
export const TOPOLOGY_REFRESH_MS = 1000;

/** Starts watching `cluster`; returns the function that stops it (close() calls it). */
export function watchClusterTopology(cluster: ClusterClient, onError: (error: unknown) => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lastRead = 0;
  const unreachable = () =>
    cluster.masters.some((master) => master.client !== undefined && !master.client.isReady) ||
    (cluster.pubSubNode !== undefined && !cluster.pubSubNode.client.isReady);
  const refresh = () => {
    if (stopped || !cluster.isOpen) return (timer = undefined);
    lastRead = Date.now();
    cluster._slots
      .rediscover()
      .catch(onError)
      .finally(() => {
        timer = undefined;
        if (unreachable()) schedule();
      });
  };
  // at most one read a TOPOLOGY_REFRESH_MS, the first at once: a connection that failed on a node just
  // replaced must not wait a period to learn its replacement
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(refresh, Math.max(0, lastRead + TOPOLOGY_REFRESH_MS - Date.now()));
    timer.unref();
  };
  // Both come once per failed (re)connection attempt of a node's client, a never-ready one's too.
  cluster.on('node-reconnecting', schedule);
  cluster.on('node-error', schedule);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
