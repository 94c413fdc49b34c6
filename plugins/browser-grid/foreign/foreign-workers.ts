// The proxy's side of a mixed fleet: workers registered by another
// implementation (playwright-distributed) are adopted as soon as their hash is
// written (keyspace notifications, watch.ts) or found by a SCAN every few
// heartbeats, and a departed worker's counter fields and index entries are
// removed with it (adopt.ts says how a worker is adopted).
import type { Subscriber } from '../../../entries/plugin.ts';
import { publishCapacity } from '../admission/admission.ts';
import type { Ctx } from '../context.ts';
import { parseRef } from '../refs.ts';
import { removeWorker } from '../scripts.ts';
import { adoptRefs, adoptWorkers } from './adopt.ts';
import { enableNotifications, watchWorkers } from './watch.ts';

/** A SCAN for foreign workers runs every this many heartbeats: often without keyspace notifications, rarely (a safety net) with them. */
const SCAN_EVERY = 2;
const SCAN_EVERY_NOTIFIED = 12;

export class ForeignWorkers {
  /** Worker refs known to be in the indexes (or being adopted), so a heartbeat's HSET costs nothing. */
  private readonly known = new Set<string>();
  /** Keyspace notifications on: new workers and removed ones are seen at once. */
  private notified = false;
  private beats = 0;

  constructor(private readonly ctx: Ctx) {}

  /** Watches the worker keys and adopts the workers registered so far (adoptForeignWorkers). */
  async start(subscriber: Subscriber): Promise<void> {
    if (!this.ctx.config.adoptForeignWorkers) return;
    await watchWorkers(this.ctx, subscriber, { written: (ref) => void this.written(ref), gone: (ref) => void this.departed(ref) });
    await this.rewatch();
    // An in-process backend has no notifications to turn on and no other implementation writing to it: nothing to say.
    if (!this.notified && this.ctx.backend.capabilities.reconnect) {
      this.ctx.logger.info('keyspace notifications unavailable (CONFIG SET refused): foreign workers are found by a SCAN every 2 heartbeats');
    }
  }

  /** Keyspace notifications (again after a Redis restart, which forgets them) and one SCAN for workers registered meanwhile. */
  async rewatch(): Promise<void> {
    if (!this.ctx.config.adoptForeignWorkers) return;
    this.known.clear();
    this.notified = await enableNotifications(this.ctx);
    this.logAdopted(await adoptWorkers(this.ctx));
  }

  /** On each proxy heartbeat: a SCAN every few. */
  async heartbeat(): Promise<void> {
    if (this.ctx.config.adoptForeignWorkers && ++this.beats % (this.notified ? SCAN_EVERY_NOTIFIED : SCAN_EVERY) === 0) {
      this.logAdopted(await adoptWorkers(this.ctx));
    }
  }

  /** A worker's hash was deleted or expired (or nothing listens at its endpoint): its counter fields and index entries go with it. */
  async departed(ref: string): Promise<void> {
    this.known.delete(ref);
    await removeWorker(this.ctx, ref).catch((error) => this.ctx.logger.warn('removing a departed worker failed', { worker: ref, error: (error as Error).message }));
  }

  /** A worker's hash was written: a worker registered by another implementation is adopted at once. */
  private async written(ref: string): Promise<void> {
    if (this.known.has(ref)) return;
    this.known.add(ref);
    try {
      const adopted = await adoptRefs(this.ctx, [ref]);
      if (adopted.length) {
        this.logAdopted(adopted);
        await publishCapacity(this.ctx, parseRef(ref).browserType);
      }
    } catch (error) {
      this.known.delete(ref); // tried again on its next heartbeat
      this.ctx.logger.warn('adopting a worker failed', { worker: ref, error: (error as Error).message });
    }
  }

  private logAdopted(adopted: string[]): void {
    if (adopted.length) this.ctx.logger.info('adopted workers registered by another implementation', { workers: adopted });
  }
}
