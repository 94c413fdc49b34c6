// One virtual user on a worker. Closed model: the user runs its scenario's
// steps back to back, picking each by weight among those its pacing allows.
// Arrival-rate model: the worker's scheduler hands it iterations. Stopping is
// in two stages: a graceful request lets the current step finish; after the
// grace period the hard signal aborts whatever is still in flight.
import { HttpClient } from './http-client.ts';
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
  private stepSignal: AbortSignal | undefined;
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
    const http = new HttpClient({
      recorder: session.recorder,
      baseUrl: session.baseUrl,
      dispatcher: session.agent,
      signal: () => this.stepSignal ?? this.hard.signal,
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
    return this.stopRequest.signal.aborted;
  }

  /** Runs onStart, then (closed model) steps until stopped. */
  start(loop: boolean): void {
    this.done = (async () => {
      try {
        await this.guard('onStart', () => this.session.scenario.source.onStart?.(this.user));
      } finally {
        this.started = true;
        this.markReady();
      }
      if (loop) {
        while (!this.stopping) {
          const step = this.pick();
          if (step) await this.runStep(step);
          else await this.waitForPacing();
        }
      } else {
        await new Promise((resolve) => this.stopRequest.signal.addEventListener('abort', resolve, { once: true }));
        while (this.busy) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await this.guard('onStop', () => this.session.scenario.source.onStop?.(this.user));
      for (const resource of [...this.held]) await this.user.release(resource).catch(() => {});
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
    }
  }

  /** Asks the user to stop; after graceMs, aborts what it still runs. Resolves when it has stopped. */
  async stop(graceMs: number): Promise<void> {
    this.stopRequest.abort(new Error('user stopping'));
    const timer = setTimeout(() => this.hard.abort(new Error('grace period over')), graceMs);
    try {
      await this.done;
    } finally {
      clearTimeout(timer);
    }
  }

  private pick(ignorePacing = false): CheckedStep | undefined {
    const now = performance.now();
    const eligible = this.session.scenario.steps.filter((s) => ignorePacing || (this.nextDue.get(s.name) ?? 0) <= now);
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
    this.stepSignal = timeout ? AbortSignal.any([this.hard.signal, timeout]) : this.hard.signal;
    try {
      await step.run(this.user);
    } catch (err) {
      if (this.hard.signal.aborted) return; // stopped after the grace period: not the step's failure
      const why = timeout?.aborted ? 'timeout' : errorText(err);
      this.session.recorder.record(`step:${step.name}`, performance.now() - started, why);
    } finally {
      this.stepSignal = undefined;
    }
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
