// Whether Redis answers the orchestrator's monitor. When it stops answering
// during a test (failing over, paused, gone) the test goes on for up to
// load-test.redisLostAfter, then ends here with the results read so far; once
// it answers again after a gap, the workers (whose heartbeats stopped with
// it) are given deadAfter to be heard before any is taken for dead.
import type { Ctx } from '../context.ts';

export class RedisWatch {
  /** When Redis last answered the monitor, and since when it has answered without a gap (performance.now()). */
  private answeredAt = performance.now();
  private answeringSince = performance.now();
  /** Redis stopped answering during a test (said once). */
  private silenceSaid = false;

  constructor(private readonly ctx: Pick<Ctx, 'config' | 'logger'>) {}

  /** A silence longer than this is a gap, not a slow answer. */
  private get gapMs(): number {
    return Math.max(2000, this.ctx.config.metricsInterval * 2000);
  }

  /**
   * During a test: says once that Redis does not answer; past redisLostAfter,
   * returns why the test must end here (a monitor pass Redis holds does not stop this check).
   */
  check(epoch: number): string | undefined {
    const silentMs = performance.now() - this.answeredAt;
    if (silentMs < this.gapMs) return undefined;
    const limitS = this.ctx.config.redisLostAfter;
    if (!this.silenceSaid) {
      this.silenceSaid = true;
      this.ctx.logger.warn(`Redis does not answer: the test ends here with the results read so far if it does not answer within ${limitS} s`, { epoch });
    }
    return silentMs > limitS * 1000 ? `Redis has not answered for ${Math.round(silentMs / 1000)} s (load-test.redisLostAfter ${limitS} s)` : undefined;
  }

  /** Redis answered the monitor: after a gap (an outage, a pause), workers are given deadAfter from now to be heard again. */
  answered(): void {
    const at = performance.now();
    const gapMs = at - this.answeredAt;
    if (gapMs > this.gapMs) {
      this.answeringSince = at;
      this.ctx.logger.warn('Redis answers again: workers have deadAfter to write a heartbeat before any is taken for dead', { silentS: Math.round(gapMs / 100) / 10 });
    }
    this.answeredAt = at;
    this.silenceSaid = false;
  }

  /** Redis has answered for deadAfter without a gap: a worker could have written its heartbeat, so one that did not is dead. */
  heardLongEnough(): boolean {
    return performance.now() - this.answeringSince >= this.ctx.config.deadAfter * 1000;
  }
}
