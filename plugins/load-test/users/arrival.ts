// The arrival-rate (open) model on one worker: iterations fall due at the
// target rate whether or not earlier ones have finished. A due iteration
// waits for a free user at most maxDelayMs, then counts as dropped. Its first
// request is timed from when it fell due, not from when a user got to it, so
// the wait a slow server causes shows in the latencies (the correction for
// coordinated omission) instead of silently lowering the request rate.
export interface ArrivalOptions {
  /** Iterations per second this worker should start now. */
  rate(): number;
  idleUser(): { iteration(intended: number): Promise<void> } | undefined;
  maxDelayMs: number;
  dropped(): void;
}

const TICK_MS = 5;

export class ArrivalScheduler {
  private timer?: ReturnType<typeof setInterval>;
  private last = 0;
  private credit = 0;
  /** Due times (performance.now() ms) of iterations no user has taken yet. */
  private readonly due: number[] = [];

  constructor(private readonly options: ArrivalOptions) {}

  start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.due.length = 0;
  }

  private tick(): void {
    const now = performance.now();
    const rate = this.options.rate();
    const elapsed = now - this.last;
    this.last = now;
    if (rate > 0) {
      // Iterations that fell due during the elapsed time, each at its own moment.
      const interval = 1000 / rate;
      this.credit += elapsed / interval;
      while (this.credit >= 1) {
        this.credit -= 1;
        this.due.push(now - this.credit * interval);
      }
    }
    while (this.due.length && now - this.due[0]! > this.options.maxDelayMs) {
      this.due.shift();
      this.options.dropped();
    }
    while (this.due.length) {
      const user = this.options.idleUser();
      if (!user) break;
      void user.iteration(this.due.shift()!);
    }
  }
}
