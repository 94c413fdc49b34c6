// One virtual user on a worker. Closed model: the user runs its scenario's
// steps back to back, picking each by weight among those its pacing and
// `requires` allow. Arrival-rate model: the worker's scheduler hands it
// iterations. Stopping is in two stages: a graceful request lets the current
// step finish; after the grace period the hard signal aborts whatever is still
// in flight, and a user whose code still has not returned a moment later is
// abandoned (its resources given back), so a stop always ends.
//
// A user never holds the event loop: an iteration that did no I/O (a step
// that only records, throws or computes) is followed by a turn of the loop
// (loop-turns.ts), and a failed step or hook is followed by a back-off.
import { HttpClient } from '../clients/http-client.ts';
import type { UserConnections } from '../clients/http-connections.ts';
import { JsonRpcClient } from '../clients/jsonrpc-client.ts';
import { currentTurn, nextTurn, turnedSince } from './loop-turns.ts';
import { RequestScope } from '../clients/request-scope.ts';
import type { CheckedScenario, Resource, VirtualUser } from '../scenario/scenario.ts';
import type { TestSession } from './worker-session.ts';
import { WsClient } from '../clients/ws-client.ts';

type CheckedStep = CheckedScenario['steps'][number];
const TIMED_OUT = Symbol('timed out');

/** After a failed step: 10 ms, doubling with each further failure in a row, at most 1 s. */
export const STEP_BACKOFF_MS = { first: 10, max: 1000 };
/** After a failed onStart: 1 s, doubling with each further failure, at most 30 s. */
export const START_BACKOFF_MS = { first: 1000, max: 30_000 };
/** How long a user's code may go on after the hard stop before the user is abandoned. */
export const ABANDON_AFTER_MS = 500;

export class UserTask {
  /** Graceful stop: no new step starts, sleeps and pacing waits end. */
  private readonly stopRequest = new AbortController();
  /** Hard stop: in-flight requests and steps are aborted. */
  private readonly hard = new AbortController();
  private readonly nextDue = new Map<string, number>();
  private readonly held = new Set<Resource>();
  /** The user's requests in flight, aborted by the hard stop. */
  private readonly requests: RequestScope;
  /** The user's own HTTP connections (http-connections.ts). */
  private readonly connections: UserConnections;
  private readonly ws: WsClient;
  /** A step with a timeout: its requests, aborted by the timeout too. */
  private stepRequests: RequestScope | undefined;
  /** No step has pacing or requires: a pick needs no filter, only the steps' total weight. */
  private readonly unfiltered: boolean;
  private readonly totalWeight: number;
  /** Steps this user has completed, when some step requires others. */
  private readonly completed: Set<string> | undefined;
  /** Failed steps in a row (the back-off grows with them). */
  private failures = 0;
  private stopRequested = false;
  private intendedStart: number | undefined;
  private abandonTimer: ReturnType<typeof setTimeout> | undefined;
  private cleaned = false;
  /** Resolves when the user has stopped (or was abandoned) and gave back its resources. */
  done: Promise<void> = Promise.resolve();
  private markDone!: () => void;
  busy = false;
  /** onStart has succeeded: the user may take arrival-rate iterations. */
  started = false;
  readonly user: VirtualUser;

  constructor(
    private readonly session: TestSession,
    readonly id: number,
  ) {
    const steps = session.scenario.steps;
    this.unfiltered = steps.every((s) => !s.everyMs && !s.requires);
    this.completed = steps.some((s) => s.requires) ? new Set() : undefined;
    this.totalWeight = steps.reduce((sum, s) => sum + s.weight, 0);
    this.requests = new RequestScope(this.hard.signal);
    this.connections = session.dispatchers.forUser();
    const http = new HttpClient({
      recorder: session.recorder,
      targets: session.targets,
      connections: this.connections,
      scope: () => this.stepRequests ?? this.requests,
      takeIntendedStart: () => {
        const t = this.intendedStart;
        this.intendedStart = undefined;
        return t;
      },
    });
    this.ws = new WsClient(session.recorder, session.wsBaseUrl, this.hard.signal);
    const task = this;
    const recorder = session.recorder;
    this.user = {
      id,
      workerId: session.workerId,
      params: session.params,
      state: {},
      http,
      jsonrpc: new JsonRpcClient(http, session.recorder, session.jsonrpcUrl),
      ws: this.ws,
      signal: this.hard.signal,
      acquire: async <T>(name: string) => {
        const resource = await session.acquire<T>(name);
        if (resource) task.held.add(resource);
        return resource;
      },
      release: async (resource) => {
        if (!task.held.delete(resource)) return;
        await session.release(resource);
      },
      record: (metric, ms, error) => recorder.record(metric, ms, error),
      check: (name, condition) => {
        const ok = Boolean(condition);
        recorder.record(`check:${name}`, 0, ok ? undefined : 'failed');
        return ok;
      },
      // A stop request ends a sleep early (the step goes on to finish, e.g. to give things back); an abort rejects it.
      sleep: (ms) =>
        session.clock.sleep(ms, AbortSignal.any([this.stopRequest.signal, this.hard.signal])).catch((err: unknown) => {
          if (this.hard.signal.aborted) throw err;
        }),
    };
  }

  get stopping(): boolean {
    return this.stopRequested;
  }

  /** Runs onStart (again after a back-off while it fails), then (closed model) steps until stopped. */
  start(loop: boolean): void {
    this.done = new Promise((resolve) => (this.markDone = resolve));
    void (async () => {
      this.started = await this.startUser();
      if (this.started && !loop) this.session.userIdle(this);
      if (this.started && loop) await this.loop();
      else if (!loop) {
        await new Promise((resolve) => this.stopRequest.signal.addEventListener('abort', resolve, { once: true }));
        while (this.busy && !this.hard.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await this.guard('onStop', () => this.session.scenario.source.onStop?.(this.user));
      await this.cleanUp();
    })()
      .catch(() => {})
      .finally(() => this.markDone());
  }

  /** onStart until it succeeds (true) or the user is stopped (false); each failure is counted as hook:onStart. */
  private async startUser(): Promise<boolean> {
    const onStart = this.session.scenario.source.onStart;
    if (!onStart) return true;
    for (let tries = 0; !this.stopRequested; tries++) {
      if (await this.guard('onStart', () => onStart(this.user))) return true;
      if (this.stopRequested) break;
      await this.user.sleep(Math.min(START_BACKOFF_MS.max, START_BACKOFF_MS.first * 2 ** tries)).catch(() => {});
    }
    return false;
  }

  private async loop(): Promise<void> {
    while (!this.stopRequested) {
      const turn = currentTurn();
      const step = this.pick();
      let ok = true;
      if (!step) await this.waitForPacing();
      else if (step.everyMs || step.timeoutMs || this.completed) ok = await this.runStep(step);
      else {
        // A step with no pacing, timeout or requires, run here: one async call and its promise less per iteration.
        const started = performance.now();
        try {
          await step.run(this.user);
        } catch (err) {
          ok = false;
          this.stepFailed(step, started, err);
        }
      }
      if (!ok) await this.backOff();
      else {
        this.failures = 0;
        if (!turnedSince(turn)) await nextTurn(); // no I/O in the iteration: let timers, sockets and signals in
      }
    }
  }

  private async backOff(): Promise<void> {
    const ms = Math.min(STEP_BACKOFF_MS.max, STEP_BACKOFF_MS.first * 2 ** this.failures);
    this.failures += 1;
    await this.user.sleep(ms).catch(() => {});
  }

  /** Arrival-rate mode: one iteration that was due at `intended` (performance.now() ms). */
  async iteration(intended: number): Promise<void> {
    this.busy = true;
    try {
      this.intendedStart = intended;
      const step = this.pick(true);
      if (step) await this.runStep(step);
    } finally {
      this.intendedStart = undefined;
      this.busy = false;
      if (!this.stopRequested) this.session.userIdle(this);
    }
  }

  /** Asks the user to stop; after graceMs, aborts what it still runs. Resolves when it has stopped (or was abandoned). */
  async stop(graceMs: number): Promise<void> {
    this.stopRequested = true;
    this.stopRequest.abort(new Error('user stopping'));
    const timer = setTimeout(() => this.abort(), graceMs);
    try {
      await this.done;
    } finally {
      clearTimeout(timer);
      clearTimeout(this.abandonTimer);
    }
  }

  /** The hard stop; a user whose code has not returned ABANDON_AFTER_MS later is left behind. */
  private abort(): void {
    if (this.hard.signal.aborted) return;
    this.hard.abort(new Error('grace period over'));
    this.abandonTimer = setTimeout(() => {
      void this.cleanUp().finally(() => this.markDone());
    }, ABANDON_AFTER_MS);
  }

  /** Gives back the user's resources and closes its connections (once). */
  private async cleanUp(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    for (const resource of [...this.held]) await this.user.release(resource).catch(() => {});
    this.ws.closeAll();
    // Not waited for: a request the user did not wait for may still be out on them.
    void this.connections.close().catch(() => {});
  }

  private pick(ignorePacing = false): CheckedStep | undefined {
    const { steps } = this.session.scenario;
    if (this.unfiltered || (ignorePacing && !this.completed)) {
      if (steps.length === 1) return steps[0];
      let r = Math.random() * this.totalWeight;
      for (const step of steps) if ((r -= step.weight) < 0) return step;
      return steps.at(-1);
    }
    const now = performance.now();
    const eligible = steps.filter(
      (s) => (ignorePacing || (this.nextDue.get(s.name) ?? 0) <= now) && (!s.requires || s.requires.every((r) => this.completed!.has(r))),
    );
    if (!eligible.length) return undefined;
    let r = Math.random() * eligible.reduce((sum, s) => sum + s.weight, 0);
    for (const step of eligible) if ((r -= step.weight) < 0) return step;
    return eligible.at(-1);
  }

  private async waitForPacing(): Promise<void> {
    const next = Math.min(...this.session.scenario.steps.map((s) => this.nextDue.get(s.name) ?? 0));
    await this.user.sleep(Math.max(1, next - performance.now())).catch(() => {});
  }

  /** Runs one step (pacing, timeout, requires); false when it failed. */
  private async runStep(step: CheckedStep): Promise<boolean> {
    const started = performance.now();
    if (step.everyMs) {
      const [min, max] = step.everyMs;
      this.nextDue.set(step.name, started + min + Math.random() * (max - min));
    }
    const ok = step.timeoutMs ? await this.runWithTimeout(step, step.timeoutMs, started) : await this.runPlain(step, started);
    if (ok) this.completed?.add(step.name);
    return ok;
  }

  private async runPlain(step: CheckedStep, started: number): Promise<boolean> {
    try {
      await step.run(this.user);
      return true;
    } catch (err) {
      this.stepFailed(step, started, err);
      return false;
    }
  }

  /** The step against its timeout: at the timeout its requests are aborted and the user moves on, whether or not the step returns. */
  private async runWithTimeout(step: CheckedStep, timeoutMs: number, started: number): Promise<boolean> {
    const timeout = new AbortController();
    let timedOut!: () => void;
    const expired = new Promise<typeof TIMED_OUT>((resolve) => (timedOut = () => resolve(TIMED_OUT)));
    const timer = setTimeout(() => {
      timeout.abort(new DOMException('The step timed out', 'TimeoutError'));
      timedOut();
    }, timeoutMs);
    const scope = (this.stepRequests = new RequestScope(AbortSignal.any([this.hard.signal, timeout.signal])));
    const ran = (async () => step.run(this.user))();
    try {
      if ((await Promise.race([ran, expired])) === TIMED_OUT) {
        ran.catch(() => {}); // what it does after the timeout no longer counts
        this.stepFailed(step, started, undefined, true);
        return false;
      }
      return true;
    } catch (err) {
      this.stepFailed(step, started, err, timeout.signal.aborted);
      return false;
    } finally {
      clearTimeout(timer);
      scope.close();
      if (this.stepRequests === scope) this.stepRequests = undefined;
    }
  }

  private stepFailed(step: CheckedStep, started: number, err: unknown, timedOut = false): void {
    if (this.hard.signal.aborted) return; // stopped after the grace period: not the step's failure
    this.session.recorder.record(`step:${step.name}`, performance.now() - started, timedOut ? 'timeout' : errorText(err), 'custom', () => stackText(err));
  }

  /** Runs a hook; false (and counted as hook:<name>) when it threw. */
  private async guard(hook: string, run: () => unknown): Promise<boolean> {
    const started = performance.now();
    try {
      await run();
      return true;
    } catch (err) {
      if (!this.hard.signal.aborted) this.session.recorder.record(`hook:${hook}`, performance.now() - started, errorText(err), 'custom', () => stackText(err));
      return false;
    }
  }
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
}

/** An exception's whole text, its stack when it has one (the failures view's sample). */
function stackText(err: unknown): string {
  return err instanceof Error ? err.stack ?? `${err.name}: ${err.message}` : String(err);
}
