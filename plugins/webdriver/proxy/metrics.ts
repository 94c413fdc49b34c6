// The proxy's HTTP metrics: requests per method and status, bytes in and out.
// Counted in memory and added to Redis (HINCRBY) every metricsFlushInterval,
// so a command never waits for a metrics write.
import type { Command } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';

export class HttpMetrics {
  private requests = new Map<string, Map<number, number>>();
  private bytesIn = 0;
  private bytesOut = 0;
  private timer?: ReturnType<typeof setInterval>;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: Ctx) {}

  count(method: string, status: number, bytesIn: number, bytesOut: number): void {
    let byStatus = this.requests.get(method);
    if (!byStatus) {
      const m = /^[A-Z]+$/.test(method) ? method : 'OTHER';
      byStatus = this.requests.get(m) ?? new Map<number, number>();
      this.requests.set(m, byStatus);
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.bytesIn += bytesIn;
    this.bytesOut += bytesOut;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.ctx.config.proxy.metricsFlushInterval * 1000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const { keys, backend } = this.ctx;
      const commands: Command[] = [];
      for (const [method, byStatus] of this.requests) {
        for (const [status, n] of byStatus) commands.push(['HINCRBY', keys.httpRequests({ method }), String(status), n]);
      }
      if (this.bytesIn) commands.push(['HINCRBY', keys.httpBytes(), 'in', this.bytesIn]);
      if (this.bytesOut) commands.push(['HINCRBY', keys.httpBytes(), 'out', this.bytesOut]);
      if (!commands.length) return;
      const taken = { requests: this.requests, bytesIn: this.bytesIn, bytesOut: this.bytesOut };
      this.requests = new Map();
      this.bytesIn = 0;
      this.bytesOut = 0;
      try {
        await backend.pipeline(commands);
      } catch (error) {
        // keep the counts for the next flush
        for (const [method, byStatus] of taken.requests) {
          const mine = this.requests.get(method) ?? new Map<number, number>();
          for (const [status, n] of byStatus) mine.set(status, (mine.get(status) ?? 0) + n);
          this.requests.set(method, mine);
        }
        this.bytesIn += taken.bytesIn;
        this.bytesOut += taken.bytesOut;
        this.ctx.logger.warn('metrics flush failed; kept for the next one', { error: (error as Error).message });
      }
    });
    return this.flushing;
  }
}
