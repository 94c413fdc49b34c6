// One virtual user on a worker. Closed model: the user runs its scenario's
// steps back to back, picking each by weight among those its pacing allows.
// Arrival-rate model: the worker's scheduler hands it iterations. Stopping is
// in two stages: a graceful request lets the current step finish; after the
// grace period the hard signal aborts whatever is still in flight.
import { HttpClient } from './http-client.ts';
import type { UserConnections } from './http-connections.ts';
import { RequestScope } from './request-scope.ts';
import type { CheckedScenario, Resource, VirtualUser } from './scenario.ts';
import type { TestSession } from './worker-session.ts';

type CheckedStep = CheckedScenario['steps'][number];

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
  /** A step with a timeout: its requests, aborted by the timeout too. */
  private stepRequests: RequestScope | undefined;
  /** No step has pacing: a pick needs no filter, only the steps' total weight. */
  private readonly unpaced: boolean;
  private readonly totalWeight: number;
  private stopRequested = false;
  private intendedStart: number | undefined;
  /** Resolves once onStart has run (or failed). */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  /** Resolves when the user has stopped and given back its resources. */
  done: Promise<void> = Promise.resolve();
  busy = false;
  /** onStart has finished: the user may take arrival-rate iterations. */
  started = false;
  readonly user: VirtualUser;

  constructor(
    private readonly session: TestSession,
    readonly id: number,
  ) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    const steps = session.scenario.steps;
    this.unpaced = steps.every((s) => !s.everyMs);
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
    const task = this;
    this.user = {
      id,
      workerId: session.workerId,
      params: session.params,
      state: {},
      http,
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
      record: (metric, ms, error) => session.recorder.record(metric, ms, error),
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

  /** Runs onStart, then (closed model) steps until stopped. */
  start(loop: boolean): void {
    this.done = (async () => {
      try {
        await this.guard('onStart', () => this.session.scenario.source.onStart?.(this.user));
      } finally {
        this.started = true;
        this.markReady();
        if (!loop) this.session.userIdle(this);
      }
      if (loop) {
        while (!this.stopRequested) {
          const step = this.pick();
          if (!step) await this.waitForPacing();
          else if (step.everyMs || step.timeoutMs) await this.runStep(step);
          else {
            // A step with no pacing and no timeout, run here: one async call and its promise less per iteration.
            const started = performance.now();
            try {
              await step.run(this.user);
            } catch (err) {
              this.stepFailed(step, started, err);
            }
          }
        }
      } else {
        await new Promise((resolve) => this.stopRequest.signal.addEventListener('abort', resolve, { once: true }));
        while (this.busy) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await this.guard('onStop', () => this.session.scenario.source.onStop?.(this.user));
      for (const resource of [...this.held]) await this.user.release(resource).catch(() => {});
      // Not waited for: a request the user did not wait for may still be out on them.
      void this.connections.close().catch(() => {});
    })();
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

  /** Asks the user to stop; after graceMs, aborts what it still runs. Resolves when it has stopped. */
  async stop(graceMs: number): Promise<void> {
    this.stopRequested = true;
    this.stopRequest.abort(new Error('user stopping'));
    const timer = setTimeout(() => this.hard.abort(new Error('grace period over')), graceMs);
    try {
      await this.done;
    } finally {
      clearTimeout(timer);
    }
  }

  private pick(ignorePacing = false): CheckedStep | undefined {
    if (ignorePacing || this.unpaced) {
      const { steps } = this.session.scenario;
      if (steps.length === 1) return steps[0];
      let r = Math.random() * this.totalWeight;
      for (const step of steps) if ((r -= step.weight) < 0) return step;
      return steps.at(-1);
    }
    const now = performance.now();
    const eligible = this.session.scenario.steps.filter((s) => (this.nextDue.get(s.name) ?? 0) <= now);
    if (!eligible.length) return undefined;
    let r = Math.random() * eligible.reduce((sum, s) => sum + s.weight, 0);
    for (const step of eligible) if ((r -= step.weight) < 0) return step;
    return eligible.at(-1);
  }

  private async waitForPacing(): Promise<void> {
    const next = Math.min(...this.session.scenario.steps.map((s) => this.nextDue.get(s.name) ?? 0));
    await this.user.sleep(Math.max(1, next - performance.now())).catch(() => {});
  }

  private async runStep(step: CheckedStep): Promise<void> {
    const started = performance.now();
    if (step.everyMs) {
      const [min, max] = step.everyMs;
      this.nextDue.set(step.name, started + min + Math.random() * (max - min));
    }
    const timeout = step.timeoutMs ? AbortSignal.timeout(step.timeoutMs) : undefined;
    if (timeout) this.stepRequests = new RequestScope(AbortSignal.any([this.hard.signal, timeout]));
    try {
      await step.run(this.user);
    } catch (err) {
      this.stepFailed(step, started, err, timeout?.aborted);
    } finally {
      this.stepRequests?.close();
      this.stepRequests = undefined;
    }
  }

  private stepFailed(step: CheckedStep, started: number, err: unknown, timedOut = false): void {
    if (this.hard.signal.aborted) return; // stopped after the grace period: not the step's failure
    this.session.recorder.record(`step:${step.name}`, performance.now() - started, timedOut ? 'timeout' : errorText(err));
  }

  private async guard(hook: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (err) {
      if (!this.hard.signal.aborted) this.session.recorder.record(`hook:${hook}`, 0, errorText(err));
    }
  }
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
}
