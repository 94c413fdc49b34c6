// A worker's part of one test (one epoch): the scenario it loaded, its users,
// the HTTP agent they share, the metrics recorder and, in arrival-rate mode,
// the scheduler that starts iterations at the target rate.
import type { Clock } from '../../../entries/plugin.ts';
import { ArrivalScheduler } from './arrival.ts';
import { LAST_METRICS_MS, REDIS_STEP_MS, retryWithin, within } from '../bounded.ts';
import { HttpDispatchers } from '../clients/http-connections.ts';
import { Targets } from '../clients/http-targets.ts';
import { MetricsRecorder } from '../metrics/recorder.ts';
import { ProbeRunner } from '../scenario/probes.ts';
import type { StartPayload } from '../envelope.ts';
import type { UsersSession } from './thread-session.ts';
import { checkUrls, type CheckedScenario, type Resource } from '../scenario/scenario.ts';
import { UserTask } from './virtual-user.ts';
import type { Ctx } from '../context.ts';
import { markRunning, syncPool } from '../scripts.ts';

export class TestSession implements UsersSession {
  readonly users = new Map<number, UserTask>();
  readonly recorder: MetricsRecorder;
  readonly dispatchers: HttpDispatchers;
  readonly params: Record<string, unknown>;
  readonly baseUrl?: string;
  /** Where user.jsonrpc posts (params.jsonrpcUrl, else the base URL). */
  readonly jsonrpcUrl: string;
  /** What user.ws resolves paths against (params.wsUrl, else the base URL with ws: for http:). */
  readonly wsBaseUrl?: string;
  /** The scenario's paths resolved against baseUrl, shared by the users. */
  readonly targets: Targets;
  readonly clock: Clock;
  private readonly synced = new Set<string>();
  /** Arrival-rate mode: users that may take an iteration (checked again when taken). */
  private readonly idle = new Set<UserTask>();
  private readonly scheduler?: ArrivalScheduler;
  private flushTimer: ReturnType<typeof setInterval>;
  /** The scenario's probes, on a worker started with --run-probes. */
  readonly probes?: ProbeRunner;
  private stopped?: Promise<void>;
  targetUsers: number;

  constructor(
    private readonly ctx: Ctx,
    readonly workerId: string,
    readonly epoch: number,
    readonly scenario: CheckedScenario,
    readonly payload: StartPayload,
  ) {
    this.clock = ctx.clock;
    this.params = Object.freeze({ ...scenario.params, ...payload.params });
    const base = scenario.source.baseUrl ?? this.params.baseUrl;
    this.baseUrl = typeof base === 'string' ? base : undefined;
    this.jsonrpcUrl = typeof this.params.jsonrpcUrl === 'string' ? this.params.jsonrpcUrl : '';
    const ws = typeof this.params.wsUrl === 'string' ? this.params.wsUrl : this.baseUrl?.replace(/^http/, 'ws');
    this.wsBaseUrl = ws;
    this.dispatchers = new HttpDispatchers(this.baseUrl, ctx.config.connections);
    this.targets = new Targets(this.baseUrl, this.dispatchers);
    try {
      checkUrls(scenario, payload.params, payload.scenario, 'params');
    } catch (err) {
      // `coord load run` refuses such a test before it starts; one started otherwise fails each request (counted), and says why here.
      ctx.logger.warn('the test has a base URL its users cannot use: their requests will fail', { error: (err as Error).message });
    }
    this.recorder = new MetricsRecorder(ctx, workerId, epoch);
    this.recorder.enabled = payload.metrics !== false;
    this.recorder.flushDue = { everyMs: ctx.config.metricsInterval * 1000, flush: () => void this.flush() };
    this.targetUsers = payload.target_users;
    this.flushTimer = setInterval(() => void this.flush(), ctx.config.metricsInterval * 1000);
    if (ctx.config.runProbes && scenario.probes.length) this.probes = new ProbeRunner(ctx, workerId, epoch, scenario, this.params);
    // Arrival-rate mode: the payload has a rate or arrival stages (whose rate may start at 0).
    if (payload.rate !== undefined || payload.arrival) {
      this.scheduler = new ArrivalScheduler({
        rate: () => (this.targetUsers > 0 ? ((payload.rate ?? 0) * this.users.size) / this.targetUsers : 0),
        idleUser: () => this.takeIdleUser(),
        maxDelayMs: ctx.config.maxIterationDelay * 1000,
        dropped: () => this.recorder.dropped(),
      });
    }
  }

  /** A user that has finished onStart or an iteration and may take the next (arrival-rate mode). */
  userIdle(task: UserTask): void {
    if (this.scheduler && this.users.get(task.id) === task) this.idle.add(task);
  }

  private takeIdleUser(): UserTask | undefined {
    for (const task of this.idle) {
      this.idle.delete(task);
      if (task.started && !task.busy && !task.stopping && this.users.get(task.id) === task) return task;
    }
    return undefined;
  }

  get mode(): 'users' | 'arrival-rate' {
    return this.scheduler ? 'arrival-rate' : 'users';
  }

  /** Requests recorded since the test began here. */
  get recorded(): number {
    return this.recorder.recorded;
  }

  /** HTTP requests recorded since the test began here (completed and aborted). */
  get requests(): number {
    return this.recorder.requests;
  }

  /** The recorder that writes this session's metric batches. */
  get writer(): string {
    return this.recorder.writer;
  }

  /** HTTP requests are also counted in `counter` as they are recorded (a users' thread's, shared with the main thread). */
  countRequestsIn(counter: Int32Array): void {
    this.recorder.countedIn = counter;
  }

  /** Arrival-rate mode: the test's rate now (the scheduler reads it at each tick). */
  setRate(rate: number): void {
    this.payload.rate = rate;
  }

  /** Starts users (one command batch's), then records them as running in one script call. */
  async addUsers(ids: readonly number[]): Promise<void> {
    const added = this.stopped ? [] : ids.filter((id) => !this.users.has(id));
    for (const id of added) {
      const task = new UserTask(this, id);
      this.users.set(id, task);
      task.start(!this.scheduler);
    }
    await this.markRunning(added);
    this.scheduler?.start();
  }

  async removeUser(id: number): Promise<void> {
    const task = this.users.get(id);
    if (!task) return;
    await task.stop(this.ctx.config.gracefulStop * 1000);
    this.users.delete(id);
    await this.markStopped([id]);
  }

  /**
   * Ctrl-C on `coord load run`: every user is aborted now (no grace period), so
   * the stop that follows (stop()) ends within moments whatever the steps do.
   */
  interrupt(): void {
    this.scheduler?.stop();
    for (const task of this.users.values()) void task.stop(0);
  }

  /**
   * Stops every user (grace period, then abort), writes the last metrics.
   * Idempotent, and bounded whatever Redis does: the last metrics are
   * written again for up to LAST_METRICS_MS while Redis fails over.
   */
  stop(): Promise<void> {
    return (this.stopped ??= (async () => {
      this.scheduler?.stop();
      const probes = this.probes?.stop();
      const grace = this.ctx.config.gracefulStop * 1000;
      const ids = [...this.users.keys()];
      await Promise.all([...this.users.values()].map((task) => task.stop(grace)));
      await within(this.markStopped(ids), REDIS_STEP_MS, 'marking users stopped').catch(() => {});
      this.users.clear();
      clearInterval(this.flushTimer);
      await this.writeLastMetrics();
      await within(probes ?? Promise.resolve(), REDIS_STEP_MS, 'writing the last probe values').catch(() => {});
      await this.dispatchers.close().catch(() => {});
    })());
  }

  private async writeLastMetrics(): Promise<void> {
    try {
      await retryWithin(() => this.recorder.flush(), LAST_METRICS_MS, 'writing the last metrics');
    } catch (err) {
      const { unwrittenBatches, unwrittenRequests } = this.recorder;
      this.ctx.logger.error('the last metrics were not written: the results of this test miss them', {
        workerId: this.workerId, epoch: this.epoch, flushes: unwrittenBatches, requests: unwrittenRequests, error: (err as Error).message,
      });
    }
  }

  /** Records users as running (only those still assigned to this worker). */
  private async markRunning(ids: readonly number[]): Promise<void> {
    await markRunning(this.ctx, this.workerId, ids);
  }

  private async markStopped(ids: readonly number[]): Promise<void> {
    if (!ids.length) return;
    await this.ctx.backend.send(['SREM', this.ctx.keys.workerActiveUsers({ workerId: this.workerId }), ...ids]);
  }

  /** A write of metrics failed and none has succeeded since (said once, and once more when they are written). */
  private writeFailing = false;

  async flush(): Promise<void> {
    try {
      await this.recorder.flush();
      if (this.writeFailing) this.ctx.logger.info('metrics written again: nothing kept is left', { workerId: this.workerId });
      this.writeFailing = false;
    } catch (err) {
      if (this.writeFailing) return;
      this.writeFailing = true;
      const { unwrittenBatches, unwrittenRequests } = this.recorder;
      this.ctx.logger.warn('metrics not written yet: kept, and written again with the next batch', { flushes: unwrittenBatches, requests: unwrittenRequests, error: (err as Error).message });
    }
  }

  async acquire<T>(name: string): Promise<Resource<T> | undefined> {
    const { backend, keys } = this.ctx;
    if (!this.synced.has(name)) {
      await syncPool(this.ctx, name);
      this.synced.add(name);
    }
    const id = (await backend.send(['SPOP', keys.resourceAvailable({ name })])) as string | null;
    if (id === null) return undefined;
    const text = (await backend.send(['GET', keys.resource({ name, resourceId: id })])) as string | null;
    return { name, id, data: (text === null ? undefined : JSON.parse(text)) as T };
  }

  async release(resource: Resource): Promise<void> {
    await this.ctx.backend.send(['SADD', this.ctx.keys.resourceAvailable({ name: resource.name }), resource.id]);
  }
}
