// A load test's lifecycle, one test at a time, as the orchestrator drives it (as vikhry runs it):
// CAS IDLE → PREPARING (epoch + 1), resources, start_test to the alive
// workers, RUNNING while users ramp at the spawn rate (round-robin, in Lua),
// STOPPING: stop_test, wait for every worker's acknowledgement (users stopped,
// last metrics written), clear runtime state, IDLE. A monitor loop reads the
// metric batches, drops dead workers and gives their users to the others.
// When Redis does not answer (failing over, paused, gone) the test goes on
// for up to load-test.redisLostAfter, and workers whose heartbeats stopped
// with it are given deadAfter from its return before any is taken for dead;
// past that the test ends here with the results read so far, marked
// incomplete (the workers stop their users by themselves within the same bound).
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Command, Reply } from '../../../entries/plugin.ts';
import { RequestAccounting } from '../metrics/accounting.ts';
import type { TestState } from '../contract.ts';
import { streamIdAtLeast, type StartPayload } from '../envelope.ts';
import { clearRuntimeState, prepareResources, readBatches, readWorkers, type WorkerView } from './keyspace.ts';
import { ResultAggregator, type Batch, type TestResult } from '../metrics/results.ts';
import { checkUrls, type CheckedScenario } from '../scenario/scenario.ts';
import { loadScenario } from '../scenario/loader.ts';
import { resolveShape, shapeWant, stagesDurationMs, stageValueAhead, type LoadShape, type Stage } from '../scenario/shape.ts';
import { noRequestsOutcome } from '../metrics/traffic.ts';
import type { Ctx } from '../context.ts';
import { ConflictError, InputError } from '../errors.ts';

export interface StartOptions {
  scenario?: string;
  users: number;
  /** Users started (or stopped) per second. */
  spawnRate: number;
  /** Stops by itself after this long (ms). */
  durationMs?: number;
  params?: Record<string, unknown>;
  /** Arrival-rate mode: iterations per second for the whole test. */
  rate?: number;
  /** false: workers record nothing (bench). */
  metrics?: boolean;
  /** Users over time (k6 stages): the users follow them and the test ends after the last. */
  stages?: Stage[];
  /** Arrival rate over time (k6 ramping-arrival-rate), from `rate` (default 0); `users` is the pool. */
  rateStages?: Stage[];
}

export interface TestStatus {
  state: TestState;
  epoch: number;
  target: number;
  users: number;
  spawnRate: number;
  mode: 'users' | 'arrival-rate';
  scenario?: string;
  workers: WorkerView[];
  result?: TestResult;
  /** The running test's load shape: what it is, how far it is, the arrival rate it asks for now. */
  shape?: { kind: LoadShape['kind']; elapsedS: number; rate?: number };
  /** The last test ran no request and recorded nothing, and its scenario does not allow that (allowNoRequests): it failed. */
  noRequests?: boolean;
  /** The running test's settings, as it was started (the page's form shows them while it runs). */
  settings?: { scenario: string; users: number; spawnRate: number; duration?: string; rate?: number; params?: Record<string, unknown> };
}

interface Run {
  epoch: number;
  /** The deployment's generation when the test began (test:generation); another one means Redis lost its state. */
  generation: string;
  options: StartOptions;
  scenarioPath: string;
  scenario: CheckedScenario;
  payload: StartPayload;
  aggregator: ResultAggregator;
  /** Whether the results hold every request the workers recorded (batches written twice counted once). */
  accounting: RequestAccounting;
  cursors: Map<string, string>;
  snapshot: string[];
  target: number;
  assigned: number;
  /** Users started (or stopped) per second now: the option's, or the load shape's. */
  spawnRate: number;
  shape?: LoadShape;
  /** performance.now() when the test began running: the load shape's clock. */
  runningAt: number;
  /** The arrival rate last sent to the workers (set_rate), in a shaped arrival-rate test. */
  sentRate?: number;
  ramp?: ReturnType<typeof setInterval>;
  rampBusy: boolean;
  rampCarry: number;
  lastRampAt: number;
  durationTimer?: ReturnType<typeof setTimeout>;
  finished: Promise<TestResult>;
  finish(result: TestResult): void;
  /** Set once the test ended here without Redis (abandon()): a stop Redis held that resumes later changes nothing. */
  abandoned?: TestResult;
}

/** How a test ended here without its normal stop. */
type Abandoned = 'taken over' | 'state lost' | 'redis lost' | 'interrupted';

export class TestController {
  private run?: Run;
  private stopping?: Promise<TestResult>;
  /** A start between its first check and its test running (a stop waits for it; another start is refused). */
  private starting?: Promise<unknown>;
  private last?: TestResult;
  private lastRanNothing = false;
  private monitorTimer?: ReturnType<typeof setInterval>;
  private monitorBusy = false;
  /** endTest is giving the lease back: the monitor does not renew it. */
  private leaseEnding = false;
  private readonly tickListeners = new Set<(status: TestStatus) => void>();
  /** This orchestrator's id in the lease. */
  readonly id = randomUUID();
  /** When Redis last answered the monitor, and since when it has answered without a gap (performance.now()). */
  private answeredAt = performance.now();
  private answeringSince = performance.now();
  /** Redis stopped answering during a test (said once). */
  private silenceSaid = false;

  constructor(private readonly ctx: Ctx) {}

  get log() {
    return this.ctx.logger;
  }

  /** Starts the monitor (dead workers are dropped even between tests). */
  async open(): Promise<void> {
    await this.resetAbandoned();
    this.monitorTimer = setInterval(() => void this.monitor(), this.ctx.config.metricsInterval * 1000);
  }

  /**
   * A test whose orchestrator lease has expired lost its orchestrator (killed
   * mid-test): its users and state are stale, so they are cleared and the
   * state goes back to IDLE. A test whose lease is alive is left alone.
   */
  private async resetAbandoned(): Promise<void> {
    const state = await this.state();
    if (state === 'IDLE') return;
    if ((await this.ctx.backend.send(['EXISTS', this.ctx.keys.orchestrator()])) === 1) {
      this.log.info('another orchestrator runs a test here', { state });
      return;
    }
    this.log.warn('found a test whose orchestrator is gone: resetting to IDLE', { state });
    await clearRuntimeState(this.ctx, { metrics: false });
    await this.transition(state, 'IDLE', false).catch(() => {});
  }

  private async holdLease(): Promise<void> {
    await this.ctx.backend.send(['SET', this.ctx.keys.orchestrator(), this.id, 'EX', this.leaseSeconds()]);
  }

  async close(reason: string): Promise<void> {
    clearInterval(this.monitorTimer);
    if (this.run || this.stopping || this.starting) await this.stop(reason).catch(() => {});
  }

  onTick(listener: (status: TestStatus) => void): () => void {
    this.tickListeners.add(listener);
    return () => this.tickListeners.delete(listener);
  }

  /** The running test's end (its result), or undefined when none runs. */
  get finished(): Promise<TestResult> | undefined {
    return this.run?.finished;
  }

  start(options: StartOptions): Promise<{ epoch: number; finished: Promise<TestResult> }> {
    if (this.run || this.stopping || this.starting) return Promise.reject(new ConflictError('a test is already running: stop it first'));
    const starting = this.begin(options);
    this.starting = starting;
    const done = () => {
      if (this.starting === starting) this.starting = undefined;
    };
    starting.then(done, done);
    return starting;
  }

  private async begin(options: StartOptions): Promise<{ epoch: number; finished: Promise<TestResult> }> {
    const { ctx } = this;
    const scenarioPath = options.scenario ?? ctx.config.scenario;
    if (!scenarioPath) throw new InputError('no scenario: give one (--scenario FILE, or "scenario" in the request) or set load-test.scenario');
    const absolute = resolve(scenarioPath);
    const scenario = await loadScenario(absolute);
    checkUrls(scenario, options.params ?? {}, scenarioPath, 'params'); // a bad base URL is a 400 before anything starts
    const shape = resolveShape(options, scenario, ctx.config);
    const workers = await this.waitForWorkers();

    await this.resetAbandoned();
    const { epoch, generation } = await this.beginTest();
    const params = { ...scenario.params, ...options.params };
    const arrival = options.rate !== undefined || shape?.kind === 'rate-stages';
    const firstRate = shape?.kind === 'rate-stages' ? shape.startRate : options.rate;
    let finish!: (r: TestResult) => void;
    const finished = new Promise<TestResult>((r) => (finish = r));
    const firstUsers = shape?.kind === 'stages' ? 0 : options.users;
    const runMs = plannedLength(options, shape);
    const payload: StartPayload = {
      scenario: absolute,
      params: options.params ?? {},
      target_users: firstUsers,
      rate: firstRate,
      metrics: options.metrics,
      ...(shape?.kind === 'rate-stages' ? { arrival: true } : {}),
      ...(runMs === undefined ? {} : { run_ms: runMs }),
    };
    const run: Run = {
      epoch,
      generation,
      options,
      scenarioPath: absolute,
      scenario,
      payload,
      aggregator: new ResultAggregator(epoch, ctx.clock.now(), arrival ? 'arrival-rate' : 'users', scenarioPath),
      accounting: new RequestAccounting(epoch),
      cursors: new Map(),
      snapshot: workers.map((w) => w.id),
      target: firstUsers,
      assigned: 0,
      spawnRate: shape?.kind === 'stages' ? AT_ONCE : options.spawnRate,
      shape,
      runningAt: performance.now(),
      sentRate: shape?.kind === 'rate-stages' ? firstRate : undefined,
      rampBusy: false,
      rampCarry: 1, // the first user starts at once, the next ones at the spawn rate
      lastRampAt: performance.now(),
      finished,
      finish,
    };
    try {
      await clearRuntimeState(ctx, { metrics: true });
      await ctx.backend.send(['SET', ctx.keys.cursor(), 0]);
      await prepareResources(ctx, scenario, params);
      // The test's clock starts once the workers can run users (a cold worker loads its scenario first): its duration is the span users ran.
      await this.waitForAcks(run, await this.broadcast(run, 'start_test', payload, run.snapshot), 'start_test');
      run.aggregator = new ResultAggregator(epoch, ctx.clock.now(), run.aggregator.mode, scenarioPath);
      await this.timeline(run, 'start', `scenario ${scenarioPath}, ${shape ? `load shape ${describeShape(shape)}` : `target ${options.users} users`}`);
      await this.transition('PREPARING', 'RUNNING', false, epoch);
    } catch (err) {
      await this.endTest('PREPARING', epoch).catch(() => {});
      throw err;
    }
    this.run = run;
    run.aggregator.users(ctx.clock.now(), 0);
    await this.timeline(run, 'running');
    run.runningAt = performance.now();
    this.log.info('test running', {
      epoch, users: options.users, spawnRate: options.spawnRate, workers: run.snapshot, mode: run.aggregator.mode, ...(shape ? { shape: describeShape(shape) } : {}),
    });
    run.ramp = setInterval(() => void this.rampStep(run), RAMP_TICK_MS);
    void this.rampStep(run);
    if (options.durationMs) run.durationTimer = setTimeout(() => void this.stop('duration reached').catch(() => {}), options.durationMs);
    return { epoch, finished };
  }

  async setUsers(users: number): Promise<void> {
    const run = this.run;
    if (!run || this.stopping) throw new ConflictError('no test is running: start one first');
    if (run.shape && run.shape.kind !== 'rate-stages') throw new ConflictError(`the test follows its load shape (${run.shape.kind}): its users change with it`);
    run.target = users;
    run.payload.target_users = users;
    await this.timeline(run, 'users', `target ${users}`);
  }

  stop(reason: string): Promise<TestResult> {
    if (this.stopping) return this.stopping;
    const run = this.run;
    if (this.starting) {
      // A stop that arrives while a start prepares stops the test it starts, once it runs: the start may already
      // have set this.run and still be about to set its ramp and duration timers, which a stop now would miss.
      return this.starting.then(
        () => this.stop(reason),
        () => Promise.reject(new ConflictError('no test is running: its start failed')),
      );
    }
    if (!run) return Promise.reject(new ConflictError('no test is running'));
    this.stopping = (async () => {
      const { ctx } = this;
      clearInterval(run.ramp);
      clearTimeout(run.durationTimer);
      while (run.rampBusy) await new Promise((r) => setTimeout(r, 10));
      const endedAt = ctx.clock.now();
      this.log.info('test stopping', { epoch: run.epoch, reason });
      try {
        await this.transition('RUNNING', 'STOPPING', false, run.epoch).catch(() => this.transition('PREPARING', 'STOPPING', false, run.epoch));
        await this.timeline(run, 'stop', reason);
        const sent = await this.broadcast(run, 'stop_test', { reason }, run.snapshot);
        const silent = await this.waitForAcks(run, sent, 'stop_test');
        for (const worker of silent) run.accounting.note(`worker ${worker} did not confirm its stop: its last metrics may be missing`);
        this.take(run, await readBatches(ctx, run.cursors));
        await this.readTallies(run, [...sent.keys(), ...run.aggregator.workersLost]);
        run.aggregator.users(ctx.clock.now(), 0);
        await clearRuntimeState(ctx, { metrics: false });
        await this.timeline(run, 'stopped', reason, 0);
        await this.endTest('STOPPING', run.epoch);
      } catch (err) {
        // Another orchestrator took the test over, or Redis lost its state (restarted empty) while it stopped.
        if (!(err instanceof ConflictError)) throw err;
        const lost = (await ctx.backend.send(['GET', ctx.keys.generation()]).catch(() => null)) !== run.generation;
        return run.abandoned ?? this.abandon(run, err.message, lost ? 'state lost' : 'taken over', endedAt);
      }
      if (run.abandoned) return run.abandoned; // Redis held this stop past redisLostAfter: the test already ended here
      const result = this.resultOf(run, ctx.clock.now(), endedAt);
      this.finishedWith(run, result);
      this.run = undefined;
      this.stopping = undefined; // before anyone hears of the end, so a new start is accepted at once
      this.log.info('test stopped', { epoch: run.epoch, requests: result.total.count, errors: result.total.errors });
      run.finish(result);
      return result;
    })();
    this.stopping.catch(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  /**
   * The test is no longer this orchestrator's (another took it over after its
   * lease expired, or Redis lost the coordination state): end it here without
   * touching Redis, with the results read so far.
   */
  private abandon(run: Run, why: string, how: Abandoned = 'taken over', endedAt = this.ctx.clock.now()): TestResult {
    if (run.abandoned) return run.abandoned;
    clearInterval(run.ramp);
    clearTimeout(run.durationTimer);
    if (how === 'state lost') {
      this.log.error('the test lost its coordination state: ending it here', { epoch: run.epoch, why });
      run.accounting.note('Redis lost the test\'s state (restarted empty?): requests after that are not in the results');
    } else if (how === 'redis lost') {
      this.log.error(`${why}: ending the test here with the results read so far`, { epoch: run.epoch });
      run.accounting.note(`${why}: the test ended there, and the requests its workers recorded after the last batch read are not in the results`);
    } else if (how === 'interrupted') {
      this.log.warn(`${why}: ending the test here with the results read so far`, { epoch: run.epoch });
      run.accounting.note(`${why}: the test ended before its workers confirmed their stop, so their last metrics may be missing`);
    } else this.log.warn('the test was taken over by another orchestrator: ending it here', { epoch: run.epoch, why });
    const result = this.resultOf(run, this.ctx.clock.now(), endedAt);
    run.abandoned = result;
    this.finishedWith(run, result);
    if (this.run === run) this.run = undefined;
    this.stopping = undefined;
    run.finish(result);
    return result;
  }

  /**
   * Ends the running test here at once with the results read so far, without
   * waiting for Redis: coord load run's Ctrl-C when its stop does not end in
   * time. The workers stop their users on stop_test if it was sent, or by
   * themselves (redisLostAfter, or the test's planned end and a grace).
   */
  endNow(why: string): TestResult | undefined {
    const run = this.run;
    return run ? this.abandon(run, why, 'interrupted') : undefined;
  }

  /** The aggregator's result with the accounting's verdict. */
  private resultOf(run: Run, nowMs: number, endedAt?: number): TestResult {
    const result = run.aggregator.result(nowMs, endedAt);
    const incomplete = run.accounting.verdict();
    return incomplete ? { ...result, incomplete } : result;
  }

  /** Batches read from the streams, each counted once. */
  private take(run: Run, batches: readonly Batch[]): void {
    for (const batch of batches) if (run.accounting.accept(batch)) run.aggregator.add(batch);
  }

  /** Each worker's final count of HTTP requests (its heartbeat has it once its users stopped). */
  private async readTallies(run: Run, workers: readonly string[]): Promise<void> {
    const ids = [...new Set(workers)];
    if (!ids.length) return;
    const replies = await this.ctx.backend.pipeline(ids.map((workerId): Command => ['HMGET', this.ctx.keys.workerStatus({ workerId }), 'requests', 'requests_epoch', 'requests_writer']));
    ids.forEach((id, i) => {
      const [requests, epoch, writer] = (replies[i] instanceof Error ? [] : replies[i]) as (string | null)[];
      if (requests != null && writer != null && Number(epoch) === run.epoch) run.accounting.claim(id, writer, Number(requests));
    });
  }

  /** The last test ran nothing and its scenario does not allow that: the run failed. */
  get ranNothing(): boolean {
    return !this.run && this.lastRanNothing;
  }

  private finishedWith(run: Run, result: TestResult): void {
    this.last = result;
    this.lastRanNothing = noRequestsOutcome(result, run.scenario) !== undefined;
    if (this.lastRanNothing) {
      this.log.error('the test ran no requests: its users sent nothing and recorded nothing (set allowNoRequests: true in the scenario if that is expected)', { epoch: run.epoch });
    }
  }

  async status(): Promise<TestStatus> {
    const run = this.run;
    const [state, epoch, workers] = await Promise.all([this.state(), this.ctx.backend.send(['GET', this.ctx.keys.testEpoch()]), readWorkers(this.ctx)]);
    return {
      state,
      epoch: Number(epoch ?? 0),
      target: run?.target ?? 0,
      users: run?.assigned ?? 0,
      spawnRate: run ? (run.spawnRate === AT_ONCE ? run.options.spawnRate : run.spawnRate) : 0,
      mode: run?.aggregator.mode ?? this.last?.mode ?? 'users',
      scenario: run?.scenarioPath ?? this.last?.scenario,
      workers,
      result: run ? run.aggregator.result(this.ctx.clock.now()) : this.last,
      ...(run?.shape ? { shape: { kind: run.shape.kind, elapsedS: (performance.now() - run.runningAt) / 1000, ...(run.sentRate === undefined ? {} : { rate: run.sentRate }) } } : {}),
      ...(!run && this.lastRanNothing ? { noRequests: true } : {}),
      ...(run ? { settings: settingsOf(run) } : {}),
    };
  }

  /** Zeroes the running test's results, of every worker (Locust's "reset stats"): its time starts again now. */
  resetStats(): void {
    const run = this.run;
    if (!run || this.stopping) throw new ConflictError('no test is running: reset zeroes the statistics of a running test');
    run.aggregator.reset(this.ctx.clock.now());
    this.log.info('statistics reset', { epoch: run.epoch });
  }

  // ---- the loops

  private async rampStep(run: Run): Promise<void> {
    if (run.rampBusy || this.run !== run || this.stopping) return;
    run.rampBusy = true;
    try {
      const now = performance.now();
      if (run.shape && !(await this.followShape(run, run.shape, now))) return;
      run.rampCarry += ((now - run.lastRampAt) / 1000) * run.spawnRate;
      run.lastRampAt = now;
      const gap = run.target - run.assigned;
      if (gap === 0) {
        run.rampCarry = 0;
        return;
      }
      const n = Math.min(Math.abs(gap), Math.floor(run.rampCarry));
      if (n === 0) return;
      run.rampCarry -= n;
      if (gap > 0) await this.assign(run, n, []);
      else await this.unassign(run, n);
      run.aggregator.users(this.ctx.clock.now(), run.assigned);
      if (run.assigned === run.target) await this.timeline(run, 'users', `reached ${run.target}`);
    } catch (err) {
      this.log.error('changing users failed', { error: (err as Error).message });
    } finally {
      run.rampBusy = false;
    }
  }

  /**
   * Sets the users (and the arrival rate) the load shape wants now; false
   * when the shape is over or failed and the test is stopping.
   */
  private async followShape(run: Run, shape: LoadShape, now: number): Promise<boolean> {
    const elapsed = now - run.runningAt;
    let want;
    try {
      want = shapeWant(shape, elapsed);
    } catch (err) {
      this.log.error('the load shape failed: stopping the test', { error: (err as Error).message });
      void this.stop('load shape failed').catch(() => {});
      return false;
    }
    if (want === null) {
      void this.stop('load shape ended').catch(() => {});
      return false;
    }
    if (want.users !== undefined && want.users !== run.target) {
      run.target = want.users;
      run.payload.target_users = want.users;
    }
    if (shape.kind === 'function') run.spawnRate = want.spawnRate ?? AT_ONCE;
    if (shape.kind === 'rate-stages') {
      // The rate holds until the next tick: send the one of the middle of that time (within the stage), so a ramp's iterations add up.
      const rate = stageValueAhead(shape.stages, shape.startRate, elapsed, RAMP_TICK_MS / 2) ?? 0;
      const sent = run.sentRate ?? 0;
      if (Math.abs(rate - sent) > Math.max(0.002 * Math.max(rate, sent), 0.001)) {
        await this.broadcast(run, 'set_rate', { rate }, run.snapshot);
        run.sentRate = rate;
        run.payload.rate = rate;
      }
    }
    return true;
  }

  /**
   * Said once when Redis stops answering during a test; past redisLostAfter
   * the test ends here (a monitor pass Redis holds does not stop this check).
   */
  private checkRedisSilence(): void {
    const run = this.run;
    const silentMs = performance.now() - this.answeredAt;
    if (!run || silentMs < Math.max(2000, this.ctx.config.metricsInterval * 2000)) return;
    const limitS = this.ctx.config.redisLostAfter;
    if (!this.silenceSaid) {
      this.silenceSaid = true;
      this.log.warn(`Redis does not answer: the test ends here with the results read so far if it does not answer within ${limitS} s`, { epoch: run.epoch });
    }
    if (silentMs > limitS * 1000) this.abandon(run, `Redis has not answered for ${Math.round(silentMs / 1000)} s (load-test.redisLostAfter ${limitS} s)`, 'redis lost');
  }

  /** Redis answered the monitor: after a gap (an outage, a pause), workers are given deadAfter from now to be heard again. */
  private answered(): void {
    const at = performance.now();
    const gapMs = at - this.answeredAt;
    if (gapMs > Math.max(2000, this.ctx.config.metricsInterval * 2000)) {
      this.answeringSince = at;
      this.log.warn('Redis answers again: workers have deadAfter to write a heartbeat before any is taken for dead', { silentS: Math.round(gapMs / 100) / 10 });
    }
    this.answeredAt = at;
    this.silenceSaid = false;
  }

  private async monitor(): Promise<void> {
    this.checkRedisSilence();
    if (this.monitorBusy) return;
    this.monitorBusy = true;
    try {
      let run = this.run;
      const [epoch, generation] = (await this.ctx.backend.pipeline([['GET', this.ctx.keys.testEpoch()], ['GET', this.ctx.keys.generation()]])) as (string | null)[];
      this.answered();
      if (run && this.run !== run) run = undefined; // ended while Redis held the call
      if (run && !this.stopping) {
        if (generation !== run.generation) {
          this.abandon(run, 'the coordination state is gone (Redis restarted empty?): the test ends with the results read so far', 'state lost');
          run = undefined;
        } else if (Number(epoch) !== run.epoch) {
          this.abandon(run, 'a newer epoch started');
          run = undefined;
        }
      }
      if ((run || this.stopping) && !this.leaseEnding) await this.holdLease();
      const workers = await readWorkers(this.ctx);
      // A failover or a pause stops every heartbeat at once: none is taken for dead until they could be written again.
      const heardLongEnough = performance.now() - this.answeringSince >= this.ctx.config.deadAfter * 1000;
      if (heardLongEnough) for (const w of workers.filter((w) => !w.alive)) await this.dropWorker(w, run);
      if (run && !this.stopping) {
        const joined = workers.filter((w) => w.alive && !run.snapshot.includes(w.id)).map((w) => w.id);
        if (joined.length) {
          await this.broadcast(run, 'start_test', run.payload, joined);
          run.snapshot.push(...joined);
          this.log.info('workers joined the test', { workers: joined });
        }
        this.take(run, await readBatches(this.ctx, run.cursors));
        run.aggregator.users(this.ctx.clock.now(), run.assigned);
      }
      if (this.tickListeners.size) {
        const status = await this.status();
        for (const listener of this.tickListeners) listener(status);
      }
    } catch (err) {
      this.log.warn('monitor pass failed', { error: (err as Error).message });
    } finally {
      this.monitorBusy = false;
    }
  }

  private async dropWorker(w: WorkerView, run: Run | undefined): Promise<void> {
    const { ctx } = this;
    const users = (await ctx.scripts.run('dropWorker', {
      keys: { workers: {}, status: { workerId: w.id } },
      args: { workerId: w.id, now: this.nowS(), keepSeconds: 3600 },
    })) as string[];
    this.log.warn('worker dead: dropped', { workerId: w.id, lastHeartbeatAgeS: w.lastHeartbeatAgeS, status: w.status, users: users.length });
    if (!run) return;
    run.snapshot = run.snapshot.filter((id) => id !== w.id);
    run.aggregator.workersLost.push(w.id);
    await this.timeline(run, 'worker_dead', `${w.id}: ${users.length} users reassigned`);
    if (users.length && !this.stopping) {
      while (run.rampBusy) await new Promise((r) => setTimeout(r, 10));
      run.rampBusy = true;
      try {
        run.assigned -= users.length;
        await this.assign(run, users.length, users);
      } finally {
        run.rampBusy = false;
      }
    }
  }

  // ---- scripts

  private async assign(run: Run, count: number, ids: readonly string[]): Promise<void> {
    if (!run.snapshot.length) {
      this.log.warn('no alive worker to take users', { users: count });
      return;
    }
    const reply = await this.ctx.scripts.run('addUsers', {
      keys: { users: {}, cursor: {}, state: {}, epoch: {} },
      args: {
        expectEpoch: run.epoch,
        now: this.nowS(),
        commandId: randomUUID(),
        cap: this.ctx.config.commandStreamMaxLen,
        count,
        ids: JSON.stringify(ids),
        target: run.target,
        workers: run.snapshot,
      },
    });
    run.assigned += expectPairs(reply, 'addUsers').length;
  }

  private async unassign(run: Run, count: number): Promise<void> {
    const reply = await this.ctx.scripts.run('removeUsers', {
      keys: { users: {}, state: {}, epoch: {} },
      args: { expectEpoch: run.epoch, now: this.nowS(), commandId: randomUUID(), cap: this.ctx.config.commandStreamMaxLen, count, target: run.target },
    });
    run.assigned -= expectPairs(reply, 'removeUsers').length;
  }

  private async broadcast(run: { epoch: number }, type: string, payload: unknown, workers: readonly string[]): Promise<Map<string, string>> {
    if (!workers.length) return new Map();
    const reply = await this.ctx.scripts.run('broadcast', {
      keys: { epoch: {} },
      args: {
        expectEpoch: run.epoch,
        type,
        payload: JSON.stringify(payload),
        commandId: randomUUID(),
        now: this.nowS(),
        cap: this.ctx.config.commandStreamMaxLen,
        workers,
      },
    });
    const pairs = expectPairs(reply, 'broadcast');
    return new Map(pairs);
  }

  /** IDLE → PREPARING, epoch + 1 and the lease, in one step (beginTest.lua). */
  private async beginTest(): Promise<{ epoch: number; generation: string }> {
    const reply = (await this.ctx.scripts.run('beginTest', {
      keys: { state: {}, epoch: {}, lease: {}, generation: {} },
      args: { owner: this.id, leaseSeconds: this.leaseSeconds(), newGeneration: randomUUID() },
    })) as string[];
    if (reply[0] !== 'ok') {
      if (reply[1] === 'LEASE_HELD') throw new ConflictError('another orchestrator is still ending its test: try again in a moment');
      throw new ConflictError(`the test is ${reply[2]}: another test is running`);
    }
    return { epoch: Number(reply[1]), generation: reply[2]! };
  }

  /** STOPPING (or a failed start's PREPARING) → IDLE and the lease given back, in one step (endTest.lua). */
  private async endTest(from: TestState, epoch: number): Promise<void> {
    // No lease renewal may land after the lease is given back: new ones are held off, one in flight is waited for
    // (bounded, should the monitor itself be what ends the test).
    this.leaseEnding = true;
    let reply: string[];
    try {
      for (let waited = 0; this.monitorBusy && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      reply = (await this.ctx.scripts.run('endTest', {
        keys: { state: {}, epoch: {}, lease: {} },
        args: { from, expectEpoch: epoch, owner: this.id },
      })) as string[];
    } finally {
      this.leaseEnding = false;
    }
    if (reply[0] !== 'ok') throw new ConflictError(`ending test ${epoch}: ${reply[1]} ${reply[2]}`);
  }

  private leaseSeconds(): number {
    return Math.ceil(this.ctx.config.deadAfter * 2);
  }

  private async transition(from: TestState, to: TestState, bump: boolean, expectEpoch?: number): Promise<number> {
    const reply = (await this.ctx.scripts.run('transitionState', {
      keys: { state: {}, epoch: {} },
      args: { from, to, bump: bump ? '1' : '0', expectEpoch: expectEpoch === undefined ? '' : expectEpoch },
    })) as string[];
    if (reply[0] !== 'ok') {
      if (reply[1] === 'STATE_CONFLICT') throw new ConflictError(`the test is ${reply[2]}, not ${from}: ${from === 'IDLE' ? 'another test is running' : 'another orchestrator changed it'}`);
      throw new ConflictError(`the test epoch is ${reply[2]}, not ${expectEpoch}: another orchestrator started a newer test`);
    }
    return Number(reply[1]);
  }

  /** Waits for the workers sent a command to acknowledge it; resolves to those (still alive) that did not in time. */
  private async waitForAcks(run: Run, sent: Map<string, string>, command: 'start_test' | 'stop_test'): Promise<string[]> {
    const { ctx } = this;
    // A start waits as long as the workers are alive (a cold one may compile a .ts scenario on a busy machine), within reason.
    const deadline = performance.now() + (command === 'start_test' ? START_ACK_MS : ctx.config.gracefulStop * 1000 + 15_000);
    const waiting = new Map(sent);
    // A worker on the same machine stops its users in milliseconds: poll soon, then less often.
    let pause = 2;
    while (waiting.size && performance.now() < deadline) {
      const ids = [...waiting.keys()];
      const replies = (await ctx.backend.pipeline([['GET', ctx.keys.generation()], ...ids.map((workerId): Command => ['GET', ctx.keys.workerAck({ workerId })])])) as (string | null)[];
      if (replies[0] !== run.generation) throw new ConflictError('the coordination state is gone (Redis restarted empty?): no worker will acknowledge');
      const acks = replies.slice(1);
      const alive = new Set((await readWorkers(ctx)).filter((w) => w.alive).map((w) => w.id));
      ids.forEach((id, i) => {
        const ack = acks[i];
        if ((typeof ack === 'string' && streamIdAtLeast(ack, waiting.get(id)!)) || !alive.has(id)) waiting.delete(id);
      });
      if (waiting.size) await ctx.clock.sleep(pause);
      pause = Math.min(50, pause * 2);
    }
    if (waiting.size) this.log.warn(`workers did not acknowledge ${command} in time`, { workers: [...waiting.keys()] });
    return [...waiting.keys()];
  }

  private async waitForWorkers(): Promise<WorkerView[]> {
    const deadline = performance.now() + this.ctx.config.waitForWorkers * 1000;
    for (;;) {
      const alive = (await readWorkers(this.ctx)).filter((w) => w.alive);
      if (alive.length) return alive;
      if (performance.now() >= deadline) {
        throw new ConflictError(`no worker registered at ${this.ctx.backend.displayUrl}: start some with coord run --plugin load-test --role worker`);
      }
      await this.ctx.clock.sleep(100);
    }
  }

  private async timeline(run: Run, event: string, detail = '', users = run.assigned): Promise<void> {
    const { backend, keys, config } = this.ctx;
    await backend.send([
      'XADD', keys.timeline(), 'MAXLEN', '~', config.timelineMaxLen, '*',
      'ts', this.nowS(), 'epoch', run.epoch, 'users', users, 'target', run.target, 'event', event, ...(detail ? ['detail', detail] : []),
    ]);
  }

  private async state(): Promise<TestState> {
    return (((await this.ctx.backend.send(['GET', this.ctx.keys.testState()])) as string | null) ?? 'IDLE') as TestState;
  }

  private nowS(): string {
    return (this.ctx.clock.now() / 1000).toFixed(3);
  }
}

/** How long a start waits for alive workers to have loaded the scenario before the test runs without them. */
const START_ACK_MS = 120_000;
/** How often users are added or removed towards the target (and a load shape looked at). */
const RAMP_TICK_MS = 100;
/** A spawn rate that reaches any target in one tick (a load shape's stages, a shape function without spawnRate). */
const AT_ONCE = 1e9;

/** How long a test runs from its first users, when that is known: its duration, or its stages' total (the shorter). */
function plannedLength(options: StartOptions, shape: LoadShape | undefined): number | undefined {
  const lengths = [options.durationMs, shape && shape.kind !== 'function' ? stagesDurationMs(shape.stages) : undefined];
  const known = lengths.filter((ms): ms is number => ms !== undefined && ms > 0);
  return known.length ? Math.min(...known) : undefined;
}

function describeShape(shape: LoadShape): string {
  const stages = (list: Stage[], unit: string) => list.map((s) => `${s.durationMs / 1000}s:${Math.round(s.target * 100) / 100}${unit}`).join(',');
  if (shape.kind === 'stages') return `stages ${stages(shape.stages, '')}`;
  if (shape.kind === 'rate-stages') return `rate stages from ${shape.startRate}/s ${stages(shape.stages, '/s')}`;
  return `shape function of ${shape.where}`;
}

/** A script's flat {a, b, a, b…} reply as pairs; a domain error becomes a ConflictError. */
function expectPairs(reply: Reply, script: string): [string, string][] {
  const list = reply as string[];
  if (list[0] === 'err') throw new ConflictError(`${script}: ${list[1]} ${list[2] ?? ''}`.trim());
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) pairs.push([list[i]!, list[i + 1]!]);
  return pairs;
}

function settingsOf(run: Run): NonNullable<TestStatus['settings']> {
  const { options } = run;
  return {
    scenario: options.scenario ?? run.scenarioPath,
    users: options.users,
    spawnRate: options.spawnRate,
    ...(options.durationMs ? { duration: `${options.durationMs / 1000}s` } : {}),
    ...(options.rate === undefined ? {} : { rate: options.rate }),
    ...(options.params ? { params: options.params } : {}),
  };
}
