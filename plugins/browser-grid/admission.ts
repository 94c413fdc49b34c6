// Admission: picks a worker for a new session, or queues the client first come
// first served until one frees. A waiting client is woken by the capacity
// channel the moment a session closes or a worker registers anywhere in the
// grid (a slow timer only covers lost messages), and leaves the queue on
// timeout or when it hangs up.
import { randomUUID } from 'node:crypto';
import type { RoleContext } from '../../core/plugin.ts';
import type { BrowserGridConfig } from './config.ts';
import type { BrowserGridKeys } from './contract.ts';

type Ctx = RoleContext<BrowserGridConfig, BrowserGridKeys>;

export type Admitted =
  | { kind: 'ok'; ref: string; endpoint: string; lifetime: number; queuedMs: number }
  | { kind: 'full' }
  | { kind: 'timeout'; queuedMs: number }
  | { kind: 'gone' };

/** A safety net for a lost capacity message; not how waiting clients are normally served. */
const RECHECK_MS = 1000;

export class Admission {
  private readonly waiters = new Map<string, (() => void)[]>();

  constructor(
    private readonly ctx: Ctx,
    private readonly proxyId: string,
    private readonly publishCapacity: (browserType: string) => Promise<void>,
  ) {}

  /** Number of clients this proxy has waiting. */
  get waiting(): number {
    let n = 0;
    for (const list of this.waiters.values()) n += list.length;
    return n;
  }

  /** Wakes the waiters of a browser type (on a capacity message). */
  wake(browserType: string): void {
    for (const wake of this.waiters.get(browserType) ?? []) wake();
  }

  private select(browserType: string, connectionId: string, ticket: string, exclude: readonly string[]) {
    const { config, clock } = this.ctx;
    return this.ctx.scripts.run('selectWorker', {
      keys: {
        active: {},
        lifetime: {},
        workerIndex: { browserType },
        freeIndex: { browserType },
        queue: { browserType },
        leases: { proxyId: this.proxyId },
      },
      args: {
        nowMs: clock.now(),
        staleMs: config.staleThreshold * 1000,
        maxConcurrent: config.maxConcurrentSessions,
        maxLifetime: config.maxLifetimeSessions,
        connectionId,
        ticket,
        exclude: exclude.join(','),
      },
    }) as Promise<[string, string?, string?, number?, number?]>;
  }

  /** A worker for a new session (its counters already incremented and leased), or why not. */
  async acquire(browserType: string, connectionId: string, exclude: readonly string[], signal: AbortSignal): Promise<Admitted> {
    const { config, clock } = this.ctx;
    const first = await this.select(browserType, connectionId, '', exclude);
    if (first[0] === 'ok') return { kind: 'ok', ref: first[1]!, endpoint: first[2]!, lifetime: Number(first[3]), queuedMs: 0 };
    if (config.queueSize === 0) return { kind: 'timeout', queuedMs: 0 };

    const enqueuedAt = clock.now();
    const deadline = enqueuedAt + config.queueTimeout * 1000;
    const ticket = `${deadline}:${this.proxyId}:${randomUUID().replaceAll('-', '')}`;
    const position = await this.ctx.scripts.run('enqueue', {
      keys: { queue: { browserType } },
      args: { ticket, nowMs: enqueuedAt, maxQueue: config.queueSize },
    });
    if (position === 0) return { kind: 'full' };

    const list = this.waiters.get(browserType) ?? [];
    this.waiters.set(browserType, list);
    let wake = () => {};
    const wakeMe = () => wake();
    list.push(wakeMe);
    const aborted = onAbort(signal);
    try {
      while (!signal.aborted && clock.now() < deadline) {
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const reply = await this.select(browserType, connectionId, ticket, exclude);
        if (reply[0] === 'ok') {
          return { kind: 'ok', ref: reply[1]!, endpoint: reply[2]!, lifetime: Number(reply[3]), queuedMs: clock.now() - enqueuedAt };
        }
        const wait = Math.max(0, Math.min(RECHECK_MS, deadline - clock.now()));
        await Promise.race([woken, clock.sleep(wait), aborted]);
      }
      return signal.aborted ? { kind: 'gone' } : { kind: 'timeout', queuedMs: clock.now() - enqueuedAt };
    } finally {
      list.splice(list.indexOf(wakeMe), 1);
      await this.ctx.backend.send(['ZREM', this.ctx.keys.queue({ browserType }), ticket]).catch(() => {});
      // leaving the queue (served, timed out or gone) may let the next one in
      await this.publishCapacity(browserType).catch(() => {});
    }
  }
}

function onAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
