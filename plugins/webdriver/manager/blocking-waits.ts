// Every blocking wait of a manager on one Redis connection. A New Session
// request waits for a free slot, for its scheduling and for its node; with a
// blocking pop each, a queue of hundreds held hundreds of connections. Here
// one loop blocks in a single BLPOP on the union of the lists its waiters
// want (plus the manager's wake list, pushed when a waiter wants a list the
// loop does not block on yet) and hands each item to the waiter of its list
// that came first (by rank: a request keeps its place when it waits again),
// so a queue stays in arrival order. Lists whose pushes are announced (the
// orchestrators' slots.available: an orchestrator that puts a slot back tells
// each manager on its slots.freed) are not named in the BLPOP: it names the
// notices list instead, and an announced list is read without blocking (LPOP)
// when a notice names it, when a waiter first wants it and at each sweep (a
// push nobody announced). A BLPOP registers each list it names and the loop
// issued about four per session, so naming 200 orchestrators' lists made
// Redis's work per session grow with the fleet. The waiters are indexed by list, so
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

/** A wake-up waits this long for the BLPOP in flight to come back by itself (what it may add to a wait's start). */
const WAKE_DELAY_MS = 20;

/** Announced lists are all read again this often: what a push nobody announced waits at most. */
const SWEEP_MS = LOOP_BLOCK_SECONDS * 1000;

/** Where pushes onto the announced lists are told: a list of notices, each naming (through `list`) the list pushed onto. */
export interface Notices {
  key: string;
  list(notice: string): string;
}

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
  /** Its lists' pushes are announced on the notices list: the BLPOP does not name them. */
  announced: boolean;
  settle(popped: Popped | null): void;
}

export class BlockingWaits {
  private readonly waiters = new Set<Waiter>();
  /** List → the waiters that want it: the loop's BLPOP keys, and who may take an item. */
  private readonly byKey = new Map<string, Set<Waiter>>();
  /** The lists the BLPOP names (those of waiters not announced), with how many such waiters want each. */
  private readonly blockOn = new Map<string, number>();
  /** Announced lists that may hold an item: read (LPOP) before the next BLPOP. */
  private readonly toCheck = new Set<string>();
  /** Announced lists found empty and not announced since: a new waiter of theirs costs no read. */
  private readonly empty = new Set<string>();
  private lastSweep = Date.now();
  /** The lists of the BLPOP in flight; undefined when none is. */
  private blockedOn?: ReadonlySet<string>;
  /** A wake-up is on its way to the BLPOP in flight. */
  private waking = false;
  private wakeTimer?: ReturnType<typeof setTimeout>;
  private conn?: BlockingConnection;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  /** When a BLPOP last came back (Date.now()): the last round trip of the loop to Redis. */
  private lastRound = Date.now();

  constructor(
    private readonly backend: Backend,
    private readonly wakeKey: string,
    private readonly logger: Logger,
    private readonly notices?: Notices,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.woken();
    for (const waiter of [...this.waiters]) waiter.settle(null);
    await this.conn?.close().catch(() => {});
    await this.loop;
    await this.backend.send(['DEL', this.wakeKey, ...(this.notices ? [this.notices.key] : [])]).catch(() => {});
  }

  /**
   * The first item pushed onto one of `keys` that no earlier waiter takes, or null after `seconds` or once
   * `signal` aborts. With `peek`, the item stays in its list (read, as BLMOVE list list reads it). Of the
   * waiters of one list, the lowest `rank` gets the item (default: the order of the calls). With `announced`
   * (and notices given), pushes onto `lists` are told on the notices list, which the BLPOP names instead.
   */
  pop(lists: WaitKeys, seconds: number, opts: { peek?: boolean; signal?: AbortSignal; rank?: number; announced?: boolean } = {}): Promise<Popped | null> {
    const { peek = false, signal, rank = this.nextRank() } = opts;
    const announced = Boolean(opts.announced && this.notices);
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
        announced,
        settle: (popped) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (!this.waiters.delete(waiter)) return;
          this.unindex(waiter);
          // a list no waiter wants any more: the loop stops blocking on it (or it would take items others wait
          // for); looked at once the caller has run, as a wait in blocks (the node's) waits again at once
          if (!popped && !announced) setImmediate(() => {
            if (this.blockedOn && waiter.indexed.some((key) => this.blockedOn?.has(key) && !this.blockOn.has(key))) this.wake();
          });
          resolve(popped);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      this.index(waiter);
      const blocked = this.blockedOn;
      if (blocked && (announced ? this.toCheck.size > 0 : waiter.indexed.some((key) => !blocked.has(key)))) this.wake();
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
    if (this.toCheck.size) return this.wake();
    for (const key of this.blockOn.keys()) if (!blocked.has(key)) return this.wake();
  }

  private index(waiter: Waiter): void {
    waiter.indexed = waiter.keys();
    for (const key of waiter.indexed) {
      let wanting = this.byKey.get(key);
      if (!wanting) this.byKey.set(key, (wanting = new Set()));
      wanting.add(waiter);
      if (!waiter.announced) this.blockOn.set(key, (this.blockOn.get(key) ?? 0) + 1);
      else if (!this.empty.has(key)) this.toCheck.add(key);
    }
  }

  private unindex(waiter: Waiter): void {
    for (const key of waiter.indexed) {
      const wanting = this.byKey.get(key);
      wanting?.delete(waiter);
      if (wanting?.size === 0) {
        this.byKey.delete(key);
        this.toCheck.delete(key);
        this.empty.delete(key); // nobody follows its notices any more
      }
      if (!waiter.announced) {
        const n = (this.blockOn.get(key) ?? 0) - 1;
        if (n > 0) this.blockOn.set(key, n);
        else this.blockOn.delete(key);
      }
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

  /**
   * Has the BLPOP in flight come back, WAKE_DELAY_MS from now if nothing else brings it back first: a busy
   * queue's BLPOP comes back for items more often than that, and each wake-up is one more BLPOP naming every
   * list (about two a session: its scheduling and its node waits begin while the loop blocks).
   */
  private wake(): void {
    if (this.waking) return;
    this.waking = true;
    this.wakeTimer = setTimeout(() => void this.backend.send(['RPUSH', this.wakeKey, '1']).catch(() => {}), WAKE_DELAY_MS);
  }

  /** The BLPOP about to start reads every list wanted now: a wake-up on its way is not needed. */
  private woken(): void {
    clearTimeout(this.wakeTimer);
    this.waking = false;
  }

  /** Every announced list with a waiter is read again: pushes nobody announced (another manager's give-back, an orchestrator that does not announce). */
  private sweep(): void {
    this.lastSweep = Date.now();
    this.empty.clear();
    for (const key of this.byKey.keys()) if (!this.blockOn.has(key)) this.toCheck.add(key);
  }

  /** Reads the announced lists that may hold an item, without blocking: one LPOP each, in one round trip. */
  private async check(): Promise<void> {
    const lists = [...this.toCheck];
    this.toCheck.clear();
    const items = (await withDeadline(this.backend.pipeline(lists.map((key) => ['LPOP', key])), STUCK_AFTER_MS, 'the queue loop\'s read of the announced lists')) as (string | null)[];
    this.lastRound = Date.now();
    for (const [i, key] of lists.entries()) {
      const item = items[i];
      if (item === null || item === undefined) {
        if (this.byKey.has(key)) this.empty.add(key);
        continue;
      }
      await this.deliver(key, item);
      if (this.byKey.has(key)) this.toCheck.add(key); // it may hold more
    }
  }

  /** An item popped from `key` goes to its first waiter (the lowest rank), or back to the head of its list. */
  private async deliver(key: string, value: string): Promise<void> {
    let taker: Waiter | undefined;
    for (const waiter of this.byKey.get(key) ?? []) if (!taker || waiter.rank < taker.rank) taker = waiter;
    if (!taker || taker.peek) await this.backend.send(['LPUSH', key, value]);
    if (taker) taker.settle({ key, value });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.conn ??= await this.backend.blocking();
        this.reindex(); // lists read again at every BLPOP
        if (this.notices && Date.now() - this.lastSweep >= SWEEP_MS) this.sweep();
        if (this.toCheck.size) {
          await this.check();
          continue;
        }
        const keys = new Set(this.blockOn.keys());
        this.blockedOn = keys;
        this.woken();
        const lists = this.notices ? [this.wakeKey, this.notices.key, ...keys] : [this.wakeKey, ...keys];
        const reply = (await withDeadline(this.conn.send(['BLPOP', ...lists, LOOP_BLOCK_SECONDS]), STUCK_AFTER_MS, 'the queue loop\'s BLPOP (the connection is given up)')) as [string, string] | null;
        this.lastRound = Date.now();
        this.blockedOn = undefined;
        if (!reply) continue;
        const [key, value] = reply;
        // woken: earlier wake-ups are served by the BLPOP about to start too
        if (key === this.wakeKey) {
          await this.conn.send(['DEL', this.wakeKey]);
          continue;
        }
        if (key === this.notices?.key) {
          // a slot is back on the list this notice names: read before the next BLPOP, if anyone here wants it
          const list = this.notices.list(value);
          if (this.byKey.has(list)) {
            this.empty.delete(list);
            this.toCheck.add(list);
          }
          continue;
        }
        await this.deliver(key, value);
      } catch (error) {
        this.blockedOn = undefined;
        this.woken();
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
