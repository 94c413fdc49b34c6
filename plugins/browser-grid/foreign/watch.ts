// Knowing at once when a worker record appears or disappears, without a SCAN
// per call: Redis keyspace notifications on the worker keys. A
// playwright-distributed worker writes only its hash, so its first HSET is how
// the proxy learns it exists (it is adopted within a moment), and the DEL or
// expiry of its hash is how the proxy learns it left (its counter fields and
// index entries go at once; playwright-distributed itself never removes them).
// Notifications need `notify-keyspace-events` to include K, h, g and x: the
// proxy adds the missing flags with CONFIG SET (again after a Redis restart).
// Where CONFIG is not allowed (some managed Redis services) it falls back to a
// SCAN every few heartbeats and leaves the leftovers to the reaper. With
// keyspaceEvents: preset the server's own setting is trusted and no CONFIG is sent.
import type { Subscriber } from '../../../entries/plugin.ts';
import { workerKeyRef } from './adopt.ts';
import type { Ctx } from '../context.ts';

const NEEDED = ['K', 'h', 'g', 'x'];

/** Turns on the keyspace notifications the watch needs; false when the server does not allow it. */
export async function enableNotifications(ctx: Ctx): Promise<boolean> {
  // The operator set them (redis.conf): a user limited by an ACL must not send CONFIG, which ACL LOG would record as denied.
  if (ctx.config.keyspaceEvents === 'preset') return true;
  try {
    const reply = (await ctx.backend.send(['CONFIG', 'GET', 'notify-keyspace-events'])) as string[];
    const flags = String(reply?.[1] ?? '');
    // 'A' stands for every event class (g$lshzxetd…)
    const missing = NEEDED.filter((f) => !flags.includes(f) && !(f !== 'K' && flags.includes('A')));
    if (missing.length) await ctx.backend.send(['CONFIG', 'SET', 'notify-keyspace-events', flags + missing.join('')]);
    return true;
  } catch {
    return false;
  }
}

export interface WorkerEvents {
  /** A worker's hash was written (it may be new). */
  written(ref: string): void;
  /** A worker's hash was deleted or expired. */
  gone(ref: string): void;
}

/** The PSUBSCRIBE pattern of the worker keys' keyspace events (an ACL must allow this very pattern: Redis checks PSUBSCRIBE patterns literally). */
export function workerEventsPattern(keyPrefix: string): string {
  const prefix = keyPrefix.replace(/[*?[\]\\]/g, '\\$&'); // glob characters in the prefix match themselves
  return `__keyspace@*__:${prefix}worker:*`;
}

/** Subscribes to the keyspace events of every worker key under the deployment's prefix. */
export async function watchWorkers(ctx: Ctx, subscriber: Subscriber, events: WorkerEvents): Promise<void> {
  const pattern = workerEventsPattern(ctx.global.redis.keyPrefix);
  subscriber.onMessage(({ channel, message, pattern: matched }) => {
    if (matched !== pattern) return;
    const ref = workerKeyRef(ctx, channel.slice(channel.indexOf('__:') + 3));
    if (!ref) return;
    if (message === 'hset') events.written(ref);
    else if (message === 'del' || message === 'expired') events.gone(ref);
  });
  await subscriber.psubscribe(pattern);
}
