// The sessions a proxy relays, and their leases in Redis (connection id →
// worker): each is given back exactly once when its session ends, a release
// that failed (Redis away) is retried on each heartbeat, and after Redis
// restarted empty the live ones are filed again, so limits and drains hold.
import { publishCapacity } from '../admission/admission.ts';
import type { Ctx } from '../context.ts';
import { redisDeadline } from '../redis-deadline.ts';
import { parseRef } from '../refs.ts';
import { releaseConnection, restoreLeases } from '../scripts.ts';

export class Leases {
  /** The sessions this proxy relays now: connection id → worker ref (what restoreLeases files again). */
  private readonly live = new Map<string, string>();
  /** When each of those sessions started (ms), for /v1/sessions. */
  readonly startedHere = new Map<string, number>();
  /** Releases that failed (Redis unreachable), retried on each heartbeat. */
  private readonly failed: [ref: string, connectionId: string][] = [];

  constructor(
    private readonly ctx: Ctx,
    private readonly proxyId: string,
  ) {}

  /** Sessions relayed now. */
  get size(): number {
    return this.live.size;
  }

  /** A session is relayed from now on (its lease was taken when its worker was selected). */
  opened(connectionId: string, ref: string): void {
    this.live.set(connectionId, ref);
    this.startedHere.set(connectionId, this.ctx.clock.now());
  }

  /** A relayed session ended; its lease is given back by release. */
  closed(connectionId: string): void {
    this.live.delete(connectionId);
    this.startedHere.delete(connectionId);
  }

  /** Gives back a session's lease (`rollback`: it never started, its lifetime count goes back too); retried on a later heartbeat when Redis does not answer. */
  async release(ref: string, connectionId: string, rollback: boolean): Promise<void> {
    const { browserType } = parseRef(ref);
    try {
      const { free } = await redisDeadline(releaseConnection(this.ctx, this.proxyId, ref, connectionId, rollback));
      if (free) await publishCapacity(this.ctx, browserType);
    } catch (error) {
      // a lease is given back at most once, so retrying is safe even if the first call lands late
      this.ctx.logger.warn('release failed; will retry', { worker: ref, error: (error as Error).message });
      this.failed.push([ref, connectionId]);
    }
  }

  /** Retries the releases that failed. */
  async retryFailed(): Promise<void> {
    for (const [ref, connectionId] of this.failed.splice(0)) await this.release(ref, connectionId, false);
  }

  /** Files again every session this proxy relays whose lease Redis lost (it restarted empty). */
  async restore(): Promise<void> {
    if (!this.live.size) return;
    const snapshot = [...this.live];
    const restored = await redisDeadline(restoreLeases(this.ctx, this.proxyId, snapshot));
    if (!restored.length) return;
    this.ctx.logger.info('restored leases Redis had lost', { sessions: restored.length });
    // a session that ended while the call was in flight is given back again
    const sent = new Map(snapshot);
    for (const connectionId of restored) {
      if (!this.live.has(connectionId)) await this.release(sent.get(connectionId)!, connectionId, false);
    }
  }
}
