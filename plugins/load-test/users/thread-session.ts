// A worker's users in a worker thread of their own (user-thread.ts): the
// thread (UserThread, started with the worker, so it is warm when a test
// comes) and a test's part of it (ThreadSession), which the worker role in
// the main thread drives with the same orders as a TestSession in this
// thread (UsersSession). Why a thread: it runs on a core of its own, and it
// can always be stopped. When a stop comes
// the thread is asked first (users finish their step within the grace period,
// the last metrics are written); a thread that has not been heard from for
// BLOCKED_MS — users' code holds it (a synchronous step) — is terminated, so
// a stop ends within moments whatever the steps do (the next test gets a new
// thread). What a terminated
// thread's users recorded since its last metric batch is lost; the batch is
// written when the stop is asked, so that is at most the step they were in.
// Its users' requests are also counted in memory shared with the main
// thread as they are recorded, which the worker then reports as the test's
// final count: the orchestrator names what no batch holds.
import { Worker } from 'node:worker_threads';
import type { StartPayload } from '../envelope.ts';
import type { GlobalConfig } from '../../../entries/plugin.ts';
import { LAST_METRICS_MS, REDIS_STEP_MS, within } from '../bounded.ts';
import { answerCall, type CallMessage, type ReplyMessage } from './port-backend.ts';
import { ABANDON_AFTER_MS } from './virtual-user.ts';
import type { Ctx } from '../context.ts';
import type { LoadTestConfig } from '../config.ts';
import { ScenarioError } from '../errors.ts';

/** What the worker role asks of its part of a test, here or in a thread. */
export interface UsersSession {
  readonly epoch: number;
  readonly mode: 'users' | 'arrival-rate';
  targetUsers: number;
  addUsers(ids: readonly number[]): Promise<void>;
  removeUser(id: number): Promise<void>;
  setRate(rate: number): void;
  /** Ctrl-C: every user is aborted now. */
  interrupt(): void;
  /** Stops every user, writes the last metrics. Idempotent. */
  stop(): Promise<void>;
  /** Requests recorded (for the log). */
  readonly recorded: number;
  /** HTTP requests recorded, completed and aborted (final once stop() resolved): what the test's results must hold. */
  readonly requests: number;
  /** The recorder that wrote them (its metric batches carry it); empty until known. */
  readonly writer: string;
}

/** What the main thread gives a user thread to start with. */
export interface UserThreadData {
  config: Readonly<LoadTestConfig>;
  global: Readonly<GlobalConfig>;
  displayUrl: string;
  workerId: string;
  /** A scenario to load before any test asks (load-test.scenario). */
  preload?: string;
}

/** The main thread's orders. */
export type ToThread =
  | ReplyMessage
  | { type: 'start'; epoch: number; scenario: string; payload: StartPayload; counter: SharedArrayBuffer }
  | { type: 'add'; seq: number; ids: number[] }
  | { type: 'remove'; seq: number; id: number }
  | { type: 'target'; users: number }
  | { type: 'rate'; rate: number }
  | { type: 'interrupt' }
  | { type: 'stop' };

/** How often a user thread says it is not held (ms). */
export const TICK_MS = 100;

/** How often a stopping thread is looked at (ms). */
const LOOK_MS = TICK_MS / 2;

/**
 * Resolves once the messages already waiting on this thread's ports have been read: a timer that fires after
 * the process waited for a core runs before them (timers come first in an event loop's turn; setImmediate after).
 */
const messagesRead = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Silence after which a thread asked to stop counts as held by users' code (ms). */
export const BLOCKED_MS = 4 * TICK_MS;
/** The same after Ctrl-C, which wants the run to end now. */
export const INTERRUPTED_BLOCKED_MS = 2 * TICK_MS;

type FromThread =
  | CallMessage
  | { type: 'tick' }
  | { type: 'ready'; mode: UsersSession['mode']; writer: string }
  | { type: 'failed'; message: string }
  | { type: 'done'; seq: number; error?: string }
  | { type: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> }
  | { type: 'stopped'; recorded: number; requests: number; writer: string }
  | { type: 'exited' };

/** The thread's module: .js once built, .ts from the sources (run under a TypeScript loader, which the thread inherits). */
const threadModule = new URL(`./user-thread${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

/**
 * The young generation of a users' thread under a heap limit (MB). Users' requests leave short-lived garbage: a small
 * young generation holds less of it at a time (5,000 users: 6 MB kept the run ~60 MB below V8's default, 16 MB ~30 MB)
 * at no CPU per request that 50 busy users showed (bench/load-memory.mjs, bench/load.mjs).
 */
const YOUNG_GENERATION_MB = 8;

/** One worker's user thread, for as many tests as it is not terminated. */
export class UserThread {
  private readonly worker: Worker;
  lastHeard = performance.now();
  exited = false;
  /** Where the thread's messages other than backend calls and logs go (the test it runs). */
  private listener?: (msg: FromThread) => void;
  private readonly heard = new Set<() => void>();

  constructor(
    readonly ctx: Ctx,
    readonly workerId: string,
  ) {
    const data: UserThreadData = {
      config: ctx.config,
      global: ctx.global,
      displayUrl: ctx.backend.displayUrl,
      workerId,
      preload: ctx.config.scenario,
    };
    const heapMb = ctx.config.threadHeapMb;
    this.worker = new Worker(threadModule, { workerData: data, ...(heapMb > 0 ? { resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } } : {}) });
    this.worker.on('message', (msg: FromThread) => {
      this.lastHeard = performance.now();
      for (const wake of [...this.heard]) wake();
      if (msg.type === 'call') void answerCall(ctx.backend, this.worker, msg);
      else if (msg.type === 'log') ctx.logger[msg.level](msg.msg, msg.fields);
      else if (msg.type !== 'tick') this.listener?.(msg);
    });
    this.worker.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') return ctx.logger.error("the users' thread failed", { workerId, error: err.message });
      ctx.logger.error(`the users' thread ran out of memory: its users stopped. Its heap limit is load-test.threadHeapMb (${heapMb} MB): raise it (--set load-test.threadHeapMb=…), or 0 for V8's own`, { workerId });
    });
    this.worker.on('exit', () => {
      this.exited = true;
      for (const wake of [...this.heard]) wake();
      this.listener?.({ type: 'exited' });
    });
  }

  /** A test's users in this thread: resolves once the thread has loaded its scenario. */
  async session(epoch: number, scenario: string, payload: StartPayload): Promise<ThreadSession> {
    const ready = new Promise<FromThread>((resolve) => (this.listener = (msg) => ['ready', 'failed', 'exited'].includes(msg.type) && resolve(msg)));
    const counter = new SharedArrayBuffer(4);
    this.post({ type: 'start', epoch, scenario, payload, counter });
    const reply = await ready;
    if (reply.type !== 'ready') {
      if (reply.type !== 'failed') await this.terminate();
      if (reply.type === 'failed') throw new ScenarioError(reply.message);
      throw new ScenarioError("the users' thread exited before the test started", { code: 'COORD_ERR_LOAD_TEST_USERS_THREAD' });
    }
    const session = new ThreadSession(this, epoch, reply.mode, payload.target_users, new Int32Array(counter), reply.writer);
    this.listener = (msg) => session.onMessage(msg);
    return session;
  }

  post(msg: ToThread): void {
    if (!this.exited) this.worker.postMessage(msg);
  }

  /** Resolves on the thread's next message, its exit, or after `ms`. */
  heardOrAfter(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.heard.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.heard.add(done);
    });
  }

  /** Resolves once `answer` does, or once the thread has been silent for `ms` (users' code holds it), whichever is first. */
  async answerUnlessHeld(answer: Promise<void>, ms: number): Promise<void> {
    let answered = false;
    const settled = answer.then(() => {
      answered = true;
    });
    const held = (async () => {
      while (!answered && !this.exited && performance.now() - this.lastHeard <= ms) await this.heardOrAfter(LOOK_MS);
    })();
    await Promise.race([settled, held]);
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
    this.exited = true;
  }
}

/** A test's users in a UserThread. */
export class ThreadSession implements UsersSession {
  recorded = 0;
  requests = 0;
  writer = '';
  private next = 0;
  private readonly waiting = new Map<number, () => void>();
  /** Users the thread runs (the main thread gives them up itself if it must terminate the thread). */
  private readonly ids = new Set<number>();
  private stoppedMessage = false;
  private stopped?: Promise<void>;

  constructor(
    private readonly thread: UserThread,
    readonly epoch: number,
    readonly mode: UsersSession['mode'],
    private target: number,
    /** The HTTP requests its users recorded, counted by the thread as they are. */
    private readonly counted: Int32Array,
    private readonly recorderWriter: string,
  ) {}

  onMessage(msg: FromThread): void {
    switch (msg.type) {
      case 'done':
        this.waiting.get(msg.seq)?.();
        this.waiting.delete(msg.seq);
        if (msg.error) this.thread.ctx.logger.error('users not recorded as running', { error: msg.error });
        return;
      case 'stopped':
        this.recorded = msg.recorded;
        this.requests = msg.requests;
        this.writer = msg.writer;
        this.stoppedMessage = true;
        return;
      case 'exited':
        for (const done of this.waiting.values()) done();
        this.waiting.clear();
        return;
    }
  }

  private ask(msg: ToThread & { seq: number }): Promise<void> {
    return new Promise((resolve) => {
      if (this.thread.exited) return resolve();
      this.waiting.set(msg.seq, resolve);
      this.thread.post(msg);
    });
  }

  get targetUsers(): number {
    return this.target;
  }

  set targetUsers(users: number) {
    this.target = users;
    this.thread.post({ type: 'target', users });
  }

  async addUsers(ids: readonly number[]): Promise<void> {
    if (this.stopped) return;
    for (const id of ids) this.ids.add(id);
    // A thread whose users' code holds it (a synchronous step) answers only when the step ends, seconds
    // later maybe, and the worker's command loop waits for this: a stop_test behind the add would wait as
    // long. The add is queued in the thread in order either way; the stop terminates a held thread.
    await this.thread.answerUnlessHeld(this.ask({ type: 'add', seq: ++this.next, ids: [...ids] }), BLOCKED_MS);
  }

  async removeUser(id: number): Promise<void> {
    await this.ask({ type: 'remove', seq: ++this.next, id });
    this.ids.delete(id);
  }

  setRate(rate: number): void {
    this.thread.post({ type: 'rate', rate });
  }

  /** Ctrl-C: the users are aborted now, and the stop (which terminates a thread their code holds) begins without waiting for stop_test. */
  interrupt(): void {
    this.thread.post({ type: 'interrupt' });
    void this.stop(INTERRUPTED_BLOCKED_MS);
  }

  stop(blockedMs = BLOCKED_MS): Promise<void> {
    return (this.stopped ??= (async () => {
      const { thread } = this;
      const { ctx, workerId } = thread;
      thread.post({ type: 'stop' });
      // Bounded even for a thread that keeps ticking: the users' grace period, the time to abandon a user, the
      // last metrics written again while Redis fails over, and some.
      const bound = performance.now() + ctx.config.gracefulStop * 1000 + ABANDON_AFTER_MS + REDIS_STEP_MS + LAST_METRICS_MS + 2000;
      // Silence is counted in this thread's own looks, not in time alone: on a machine whose cores are all taken
      // (100 workers' threads stopping at once on 2 cores) both threads wait for a core, and a look that comes
      // late must not take the users' thread's wait for a hold. So the thread is held once it said nothing for
      // blockedMs and over as many looks as fit in blockedMs, each after the messages it had sent were read.
      const looksNeeded = Math.ceil(blockedMs / LOOK_MS);
      let silentLooks = 0;
      while (!thread.exited && !this.stoppedMessage) {
        const heard = thread.lastHeard;
        const now = performance.now();
        if ((now - heard > blockedMs && silentLooks >= looksNeeded) || now > bound) {
          ctx.logger.warn("users' code holds their thread: terminating it", { workerId, silentMs: Math.round(now - heard) });
          await thread.terminate();
          break;
        }
        await thread.heardOrAfter(LOOK_MS);
        await messagesRead();
        silentLooks = thread.lastHeard === heard ? silentLooks + 1 : 0;
      }
      if (!this.stoppedMessage) {
        // No final word from the thread (terminated, or it died: out of memory): what it recorded is in the shared
        // count, its unwritten part named as missing.
        this.requests = Atomics.load(this.counted, 0);
        this.writer = this.recorderWriter;
        if (this.ids.size) await within(ctx.backend.send(['SREM', ctx.keys.workerActiveUsers({ workerId }), ...this.ids]), REDIS_STEP_MS, 'marking users stopped').catch(() => {});
      }
      this.ids.clear();
    })());
  }
}
