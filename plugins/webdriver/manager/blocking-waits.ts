// Every blocking wait of a manager on one Redis connection. A New Session
// request waits for a free slot, for its scheduling and for its node; with a
// blocking pop each, a queue of hundreds held hundreds of connections. Here
// one loop blocks in a single BLPOP on the union of the lists its waiters
// want (plus the manager's wake list, pushed when a waiter wants a list the
// loop does not block on yet) and hands each item to the waiter of its list
// that came first (by rank: a request keeps its place when it waits again),
// so a queue stays in arrival order. The waiters are indexed by list, so
// neither a new waiter nor an item costs a pass over every list of every
// waiter (5,000 requests queued on 200 orchestrators' lists were a million
// per item, and the manager fell minutes behind). An item nobody takes any more
// (its waiter timed out or left) goes back to the head of its list. Idle, the
// loop issues one BLPOP every LOOP_BLOCK_SECONDS, so each BLPOP that comes
// back tells the manager its queue still reaches Redis (healthy()); one that
// does not come back in time is on a connection that is gone without saying
// so, and the loop opens another (before: a BLPOP on a Redis Cluster node
// killed -9 waited forever, and every new session with it).
import { type Backend, type BlockingConnection, type Logger, withDeadline } from '../../../entries/plugin.ts';

/** The loop's BLPOP timeout when nothing wakes it (an idle manager costs one command per this many seconds). */
export const IDLE_BLOCK_SECONDS = 300;

/** The manager loop's BLPOP timeout: an idle manager costs one command per this many seconds, and learns as often that its queue works. */
export const LOOP_BLOCK_SECONDS = 5;

/** A BLPOP not back this long after its timeout is given up, and its connection with it (a loaded machine's slack included). */
const STUCK_AFTER_MS = LOOP_BLOCK_SECONDS * 1000 + 5000;

export interface Popped {
  key: string;
  value: string;
}

/** The lists a waiter wants: fixed, or read again at every BLPOP (a queued request whose match changes). */
export type WaitKeys = readonly string[] | (() => readonly string[]);

interface Waiter {
  keys: () => readonly string[];
  /** The lists it is indexed under: what keys() gave when it was last indexed (a new array when they changed). */
  indexed: readonly string[];
  /** Lower is served first: the request's place in the queue, kept across its waits. */
  rank: number;
  /** The item is read, not taken: it goes back to its list before the waiter gets it. */
  peek: boolean;
  settle(popped: Popped | null): void;
}

export class BlockingWaits {
  private readonly waiters = new Set<Waiter>();
  /** List → the waiters that want it: the loop's BLPOP keys, and who may take an item. */
  private readonly byKey = new Map<string, Set<Waiter>>();
  /** The lists of the BLPOP in flight; undefined when none is. */
  private blockedOn?: ReadonlySet<string>;
  private conn?: BlockingConnection;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  /** When a BLPOP last came back (Date.now()): the last round trip of the loop to Redis. */
  private lastRound = Date.now();

  constructor(
    private readonly backend: Backend,
    private readonly wakeKey: string,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of [...this.waiters]) waiter.settle(null);
    await this.conn?.close().catch(() => {});
    await this.loop;
    await this.backend.send(['DEL', this.wakeKey]).catch(() => {});
  }

  /**
   * The first item pushed onto one of `keys` that no earlier waiter takes, or null after `seconds` or once
   * `signal` aborts. With `peek`, the item stays in its list (read, as BLMOVE list list reads it). Of the
   * waiters of one list, the lowest `rank` gets the item (default: the order of the calls).
   */
  pop(lists: WaitKeys, seconds: number, opts: { peek?: boolean; signal?: AbortSignal; rank?: number } = {}): Promise<Popped | null> {
    const { peek = false, signal, rank = this.nextRank() } = opts;
    if (this.stopped || signal?.aborted) return Promise.resolve(null);
    const keys = typeof lists === 'function' ? lists : () => lists;
    return new Promise((resolve) => {
      const onAbort = () => waiter.settle(null);
      const timer = setTimeout(onAbort, Math.max(0, seconds * 1000));
      const waiter: Waiter = {
        keys,
        indexed: [],
        rank,
        peek,
        settle: (popped) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (!this.waiters.delete(waiter)) return;
          this.unindex(waiter);
          // a list no waiter wants any more: the loop stops blocking on it (or it would take items others wait for)
          if (!popped && this.blockedOn && waiter.indexed.some((key) => !this.byKey.has(key))) this.wake();
          resolve(popped);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      this.index(waiter);
      const blocked = this.blockedOn;
      if (blocked && waiter.indexed.some((key) => !blocked.has(key))) this.wake();
    });
  }

  /** The loop reached Redis within the bound a working loop keeps (a BLPOP comes back at least every LOOP_BLOCK_SECONDS). */
  healthy(): boolean {
    return Date.now() - this.lastRound <= STUCK_AFTER_MS;
  }

  /** A waiter's lists may have changed: the loop blocks on the new ones from now on. */
  changed(): void {
    this.reindex();
    const blocked = this.blockedOn;
    if (!blocked) return; // the next BLPOP reads them
    for (const key of this.byKey.keys()) if (!blocked.has(key)) return this.wake();
  }

  private index(waiter: Waiter): void {
    waiter.indexed = waiter.keys();
    for (const key of waiter.indexed) {
      let wanting = this.byKey.get(key);
      if (!wanting) this.byKey.set(key, (wanting = new Set()));
      wanting.add(waiter);
    }
  }

  private unindex(waiter: Waiter): void {
    for (const key of waiter.indexed) {
      const wanting = this.byKey.get(key);
      wanting?.delete(waiter);
      if (wanting?.size === 0) this.byKey.delete(key);
    }
  }

  /** Indexes again the waiters whose lists changed (keys() gives another array). */
  private reindex(): void {
    for (const waiter of this.waiters) {
      if (waiter.keys() === waiter.indexed) continue;
      this.unindex(waiter);
      this.index(waiter);
    }
  }

  private ranks = 0;

  /** A rank after every rank given so far: a request's place in the queue. */
  nextRank(): number {
    return ++this.ranks;
  }

  private wake(): void {
    void this.backend.send(['RPUSH', this.wakeKey, '1']).catch(() => {});
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.conn ??= await this.backend.blocking();
        this.reindex(); // lists read again at every BLPOP
        const keys = new Set(this.byKey.keys());
        this.blockedOn = keys;
        const reply = (await withDeadline(this.conn.send(['BLPOP', this.wakeKey, ...keys, LOOP_BLOCK_SECONDS]), STUCK_AFTER_MS, 'the queue loop\'s BLPOP (the connection is given up)')) as [string, string] | null;
        this.lastRound = Date.now();
        this.blockedOn = undefined;
        if (!reply) continue;
        const [key, value] = reply;
        // woken: earlier wake-ups are served by the BLPOP about to start too
        if (key === this.wakeKey) {
          await this.conn.send(['DEL', this.wakeKey]);
          continue;
        }
        let taker: Waiter | undefined;
        for (const waiter of this.byKey.get(key) ?? []) if (!taker || waiter.rank < taker.rank) taker = waiter;
        if (!taker || taker.peek) await this.conn.send(['LPUSH', key, value]);
        if (taker) taker.settle({ key, value });
      } catch (error) {
        this.blockedOn = undefined;
        if (this.stopped) return;
        this.logger.warn('blocking wait failed; retrying', { error: (error as Error).message });
        // not awaited: a connection stuck on a dead node may take its time to close
        void this.conn?.close().catch(() => {});
        this.conn = undefined;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
}
