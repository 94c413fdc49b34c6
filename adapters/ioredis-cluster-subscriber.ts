// ioredis 5's Cluster holds its pub/sub on one node's connection (its
// ClusterSubscriber). When that connection ends, it picks another node at
// once, and that connection does not retry (ioredis gives it no
// retryStrategy). With every node of the cluster gone for good, each pick is
// refused at once, ends, and the next is made: a loop with no pause, which kept
// an obniz manager at 91% CPU and, as each pick also adds a 'close' listener to
// the socket of the last subscriber that worked, grew it to 4 GB in an hour.
// Paced here as every reconnect is: the first pick after a subscriber ended at
// once, then retryDelay (0.1 s doubling to 5 s) until one is ready again; and
// the closed socket gets no more listeners.
import type { Cluster } from 'ioredis';
import { retryDelay } from './support/retry.ts';

/** What this uses of ioredis's ClusterSubscriber (private: in another ioredis without it, nothing is paced). */
interface SubscriberPicker {
  onSubscriberEnd: () => void;
  getInstance(): { once(event: 'ready', listener: () => void): unknown } | null;
  /** The last subscriber that worked: every pick disconnects it again, for its channels. */
  lastActiveSubscriber?: { status: string; disconnect(): void };
}

/** Paces `cluster`'s subscriber picks (call it right after `new Cluster`, before it picks one). */
export function paceSubscriberPicks(cluster: Cluster): void {
  const picker = (cluster as unknown as { subscriber?: Partial<SubscriberPicker> }).subscriber;
  const pick = picker?.onSubscriberEnd;
  if (!picker || typeof pick !== 'function' || typeof picker.getInstance !== 'function') return;
  let failed = 0;
  let timer: NodeJS.Timeout | undefined;
  picker.onSubscriberEnd = () => {
    if (timer) return; // a pick is already waiting its turn
    const delay = failed === 0 ? 0 : retryDelay(failed - 1);
    failed++;
    timer = setTimeout(() => {
      timer = undefined;
      // Its socket is closed for good: disconnecting it again would only add a 'close' listener that never fires.
      const last = picker.lastActiveSubscriber;
      if (last?.status === 'end') last.disconnect = () => {};
      pick(); // does nothing once the cluster is disconnected (its subscriber is stopped)
      picker.getInstance!()?.once('ready', () => (failed = 0));
    }, delay);
    timer.unref();
  };
}
