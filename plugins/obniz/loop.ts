// A periodic task that can be woken early: heartbeats, health checks, syncs.
// Runs never overlap; a wake during a run makes the next run start right after.
import type { Clock, Logger } from '../../entries/plugin.ts';

/**
 * What a woken or stopped sleep ends with: one object, not the DOMException
 * abort() makes by default (with its stack), which 5,000 slaves of one process
 * woken by every `synchronize` made by the thousand.
 */
export const WOKEN = Object.freeze({ name: 'Woken' });

export interface LoopOptions {
  name: string;
  clock: Clock;
  logger: Logger;
  /** One run; may return the delay before the next one (ms) instead of intervalMs. */
  run: () => Promise<number | void>;
  intervalMs: number;
}

export class Loop {
  private stopped = false;
  private woken = false;
  private sleeper?: AbortController;
  private running: Promise<void> = Promise.resolve();
  private waiters: (() => void)[] = [];

  constructor(private readonly opts: LoopOptions) {}

  /** Starts the loop: the first run now, or after `firstDelayMs`. */
  start(firstDelayMs = 0): void {
    this.running = this.main(firstDelayMs);
  }

  /** Runs again as soon as possible. */
  wake(): void {
    this.woken = true;
    this.sleeper?.abort(WOKEN);
  }

  /** Wakes the loop and resolves after the next run that started after this call. */
  runSoon(): Promise<void> {
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.wake();
    return done;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeper?.abort(WOKEN);
    await this.running;
    for (const w of this.waiters.splice(0)) w();
  }

  private async main(firstDelayMs: number): Promise<void> {
    if (firstDelayMs > 0) await this.sleep(firstDelayMs);
    while (!this.stopped) {
      this.woken = false;
      const waiting = this.waiters.splice(0);
      let delay = this.opts.intervalMs;
      try {
        const next = await this.opts.run();
        if (typeof next === 'number') delay = next;
      } catch (error) {
        this.opts.logger.error(`${this.opts.name} failed`, { error: (error as Error).message });
      }
      for (const w of waiting) w();
      if (this.stopped || this.woken) continue;
      await this.sleep(delay);
    }
  }

  private async sleep(ms: number): Promise<void> {
    this.sleeper = new AbortController();
    await this.opts.clock.sleep(ms, this.sleeper.signal).catch(() => {});
  }
}

/** Runs fn over items with at most `limit` at a time; resolves when all settled. */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
