// Admission: picks a worker for a new session, or queues the client first come
// first served until one frees. A waiting client is woken by the capacity
// channel the moment a session closes or a worker registers anywhere in the
// grid (a slow timer only covers lost messages), and leaves the queue on
// timeout or when it hangs up. Every Redis call has a deadline: a Redis that
// is away gets the client a 503 in bounded time, never a hang.
import { randomUUID } from 'node:crypto';
import type { Ctx } from '../context.ts';
import { GridError } from '../errors.ts';
import { redisDeadline } from '../redis-deadline.ts';
import type { BrowserType } from '../refs.ts';
import { enqueue, type SelectKeys, type Selected, selectKeys, selectWorker } from '../scripts.ts';

export type Admitted =
  | { kind: 'ok'; ref: string; endpoint: string; lifetime: number; queuedMs: number }
  | { kind: 'full' }
  | { kind: 'timeout'; queuedMs: number }
  | { kind: 'absent' }
  | { kind: 'noversion'; versions: string[] }
  | { kind: 'gone' };

/** What the client speaks: Playwright's protocol, the DevTools protocol (Puppeteer, connectOverCDP), or WebDriver BiDi (Firefox). */
export type Protocol = 'playwright' | 'cdp' | 'bidi';

/** The queue a client waits in: its Playwright major.minor ('any' when it names none), or its protocol's ('cdp', 'bidi'), which no Playwright version concerns. */
export function queueOf(protocol: Protocol, version: string): string {
  return protocol === 'playwright' ? version || 'any' : protocol;
}

/** A safety net for a lost capacity message; not how waiting clients are normally served. */
const RECHECK_MS = 1000;
/**
 * A client about to take a queue place waits this long first: on a loaded machine a churned
 * client's hang-up can trail its request by tens of ms, and without this a churn filled the
 * queue (real clients then answered 429). A client that queues waits for a session to end anyway.
 */
const QUEUE_GRACE_MS = 100;
/** Key sets of selectWorker kept built (a browser type × queue each); cleared past this many, as clients name versions. */
const KEY_SETS_KEPT = 64;

export class Admission {
  private readonly waiters = new Map<string, (() => void)[]>();
  /** selectWorker's keys by browser type and queue, built once: selection is the hot path, and building keys costs as much as a part of the script. */
  private readonly keySets = new Map<string, SelectKeys>();

  constructor(
    private readonly ctx: Ctx,
    private readonly proxyId: string,
    /** Gives back a session selected by a call that came back after its deadline. */
    private readonly rollback: (ref: string, connectionId: string) => Promise<void>,
    /** False while the proxy knows Redis is unreachable. */
    private readonly redisUp: () => boolean,
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

  /** Wakes every waiter (Redis went away: they answer 503 now). */
  wakeAll(): void {
    for (const type of this.waiters.keys()) this.wake(type);
  }

  private selectKeys(browserType: string, queue: string): SelectKeys {
    const id = `${browserType} ${queue}`;
    let keys = this.keySets.get(id);
    if (!keys) {
      keys = selectKeys(this.ctx, browserType as BrowserType, queue, this.proxyId);
      if (this.keySets.size >= KEY_SETS_KEPT) this.keySets.clear();
      this.keySets.set(id, keys);
    }
    return keys;
  }

  private select(browserType: string, version: string, connectionId: string, ticket: string, exclude: readonly string[], protocol: Protocol): Promise<Selected> {
    if (!this.redisUp()) return Promise.reject(new GridError('Redis is unreachable', { code: 'COORD_ERR_BROWSER_GRID_REDIS_UNREACHABLE' }));
    const keys = this.selectKeys(browserType, queueOf(protocol, version));
    return redisDeadline(selectWorker(this.ctx, keys, { connectionId, ticket, exclude, version, protocol }), (late) => {
      if (late[0] === 'ok') void this.rollback(late[1]!, connectionId);
    });
  }

  /**
   * A worker for a new session (its counters already incremented and leased), or why not. `version`: the client's major.minor, or ''.
   * `answered` is called once the first selection has answered (before any wait in the queue).
   */
  async acquire(browserType: string, version: string, connectionId: string, exclude: readonly string[], signal: AbortSignal, protocol: Protocol = 'playwright', answered = () => {}): Promise<Admitted> {
    const { config, clock } = this.ctx;
    const first = await this.select(browserType, version, connectionId, '', exclude, protocol).finally(answered);
    if (first[0] === 'absent') return { kind: 'absent' };
    if (first[0] === 'noversion') return { kind: 'noversion', versions: first[1] ? first[1].split(',') : [] };
    if (first[0] === 'ok') return { kind: 'ok', ref: first[1]!, endpoint: first[2]!, lifetime: Number(first[3]), queuedMs: 0 };
    if (config.queueSize === 0) return { kind: 'timeout', queuedMs: 0 };
    // a client that hung up during the selection takes no place in the queue, nor one that
    // hangs up within QUEUE_GRACE_MS (a churned connect-then-close whose hang-up trailed its request)
    if (signal.aborted) return { kind: 'gone' };
    if (await clock.sleep(QUEUE_GRACE_MS, signal).then(() => false, () => true)) return { kind: 'gone' };

    const enqueuedAt = clock.now();
    const deadline = enqueuedAt + config.queueTimeout * 1000;
    const ticket = `${deadline}:${this.proxyId}:${randomUUID().replaceAll('-', '')}`;
    const queue = { browserType: browserType as BrowserType, version: queueOf(protocol, version) };
    const leave = () => void this.ctx.backend.send(['ZREM', this.ctx.keys.queue(queue), ticket]).catch(() => {});
    const position = await redisDeadline(enqueue(this.ctx, queue, ticket, enqueuedAt), leave);
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
        const reply = await this.select(browserType, version, connectionId, ticket, exclude, protocol);
        if (reply[0] === 'absent') return { kind: 'absent' };
        if (reply[0] === 'noversion') return { kind: 'noversion', versions: reply[1] ? reply[1].split(',') : [] };
        if (reply[0] === 'ok') {
          return { kind: 'ok', ref: reply[1]!, endpoint: reply[2]!, lifetime: Number(reply[3]), queuedMs: clock.now() - enqueuedAt };
        }
        const wait = Math.max(0, Math.min(RECHECK_MS, deadline - clock.now()));
        await Promise.race([woken, clock.sleep(wait), aborted]);
      }
      return signal.aborted ? { kind: 'gone' } : { kind: 'timeout', queuedMs: clock.now() - enqueuedAt };
    } finally {
      list.splice(list.indexOf(wakeMe), 1);
      // not awaited: with Redis away these wait for its return, the client must not
      leave();
      // leaving the queue (served, timed out or gone) may let the next one in
      void publishCapacity(this.ctx, browserType).catch(() => {});
    }
  }
}

/** Tells every proxy a worker of `browserType` may have room: their waiting clients try again at once. */
export async function publishCapacity(ctx: Ctx, browserType: string): Promise<void> {
  await ctx.backend.send(['PUBLISH', ctx.channels.capacity({ browserType: browserType as BrowserType }), '*']);
}

function onAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
