// Warm drivers: an orchestrator with inline nodes keeps a few chromedrivers
// started ahead of sessions, so a new session does not wait for one to boot.
// A node takes one if there is one (else starts its own); the pool refills
// in the background. A driver whose session ended cleanly comes back (one
// spare beyond the pool's size), so back-to-back sessions reuse it instead of
// booting another. A warm driver that exits while idle is dropped.
import { startDriver, type Driver, type DriverOptions } from './driver.ts';

/** Sessions one chromedriver serves before it is replaced, so whatever it might leak stays bounded. */
export const DRIVER_MAX_SESSIONS = 50;

export interface WarmDriver {
  driver: Driver;
  /** When it became ready (ms), for the log. */
  readyAt: number;
}

export class DriverPool {
  private warm: WarmDriver[] = [];
  private filling?: Promise<void>;
  private closed = false;
  /** Sessions each driver has served. */
  private readonly served = new WeakMap<Driver, number>();

  constructor(
    private readonly size: number,
    private readonly options: Omit<DriverOptions, 'timeoutMs'> & { timeoutMs: () => number },
    private readonly onError: (error: Error) => void,
  ) {}

  /** A ready driver, or undefined when none is warm right now. */
  take(): WarmDriver | undefined {
    const taken = this.warm.shift();
    this.fill();
    return taken;
  }

  /** Starts drivers in the background until `size` are warm. */
  fill(): void {
    if (this.closed || this.filling || this.warm.length >= this.size) return;
    this.filling = (async () => {
      while (!this.closed && this.warm.length < this.size) {
        let driver: Driver;
        try {
          driver = await startDriver({ ...this.options, timeoutMs: this.options.timeoutMs() });
        } catch (error) {
          this.onError(error as Error);
          return;
        }
        if (this.closed) return void (await driver.stop());
        this.keep(driver);
      }
    })().finally(() => (this.filling = undefined));
  }

  /**
   * A driver whose session ended cleanly (its session deleted) is offered
   * back. True when the pool keeps it; false when it does not want it (full,
   * closed, the driver has served its share or is gone), and the caller stops it.
   */
  give(driver: Driver): boolean {
    const served = (this.served.get(driver) ?? 0) + 1;
    this.served.set(driver, served);
    if (this.closed || this.size === 0 || this.warm.length > this.size || served >= DRIVER_MAX_SESSIONS || !driver.running) return false;
    this.keep(driver);
    return true;
  }

  private keep(driver: Driver): void {
    const entry = { driver, readyAt: Date.now() };
    this.warm.push(entry);
    void driver.exited.then(() => {
      this.warm = this.warm.filter((w) => w !== entry);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.filling;
    await Promise.all(this.warm.map((w) => w.driver.stop()));
    this.warm = [];
  }
}
