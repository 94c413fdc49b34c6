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
  selectSubscriber: () => void;
  getInstance(): { once(event: 'ready', listener: () => void): unknown } | null;
  /** The last subscriber that worked: every pick disconnects it again, for its channels. */
  lastActiveSubscriber?: { status: string; disconnect(): void };
}

/** Paces `cluster`'s subscriber picks (call it right after `new Cluster`, before it picks one). */
export function paceSubscriberPicks(cluster: Cluster): void {
  const picker = (cluster as unknown as { subscriber?: Partial<SubscriberPicker> }).subscriber;
  const { onSubscriberEnd, selectSubscriber, getInstance } = picker ?? {};
  if (!picker || typeof onSubscriberEnd !== 'function' || typeof selectSubscriber !== 'function' || typeof getInstance !== 'function') return;
  let failed = 0;
  let timer: NodeJS.Timeout | undefined;
  // Every pick (after an end, a node gone from the pool or one added back): the dead last subscriber is left alone.
  picker.selectSubscriber = () => {
    // Its socket is closed for good: disconnecting it again would only add a 'close' listener that never fires.
    const last = picker.lastActiveSubscriber;
    if (last?.status === 'end') last.disconnect = () => {};
    selectSubscriber.call(picker);
    getInstance.call(picker)?.once('ready', () => (failed = 0));
  };
  // The pick after a subscriber ended: paced.
  picker.onSubscriberEnd = () => {
    if (timer) return; // a pick is already waiting its turn
    const delay = failed === 0 ? 0 : retryDelay(failed - 1);
    failed++;
    timer = setTimeout(() => {
      timer = undefined;
      onSubscriberEnd.call(picker); // picks, unless the cluster was disconnected meanwhile (its subscriber stopped)
    }, delay);
    timer.unref();
  };
}
