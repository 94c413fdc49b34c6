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
// Its parts: test-run.ts (a test's state), ramp.ts (users towards the target,
// load shapes), worker-acks.ts (what it waits for from workers), run-writes.ts
// (users and timeline), worker-changes.ts (workers joining or dead mid-test),
// redis-watch.ts (Redis silent or back), keyspace.ts.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { TestState } from '../contract.ts';
import type { Ctx } from '../context.ts';
import { ConflictError, InputError } from '../errors.ts';
import { ResultAggregator, type Batch, type TestResult } from '../metrics/results.ts';
import { noRequestsOutcome } from '../metrics/traffic.ts';
import { loadScenario } from '../scenario/loader.ts';
import { checkUrls } from '../scenario/scenario.ts';
import { resolveShape } from '../scenario/shape.ts';
import { beginTest, broadcast, endTest, transitionState } from '../scripts.ts';
import { clearRuntimeState, prepareResources, readBatches, readWorkers } from './keyspace.ts';
import { rampStep, type RampHost } from './ramp.ts';
import { RedisWatch } from './redis-watch.ts';
import { timeline } from './run-writes.ts';
import { AT_ONCE, type Abandoned, describeShape, newRun, RAMP_TICK_MS, type Run, sayAbandoned, settingsOf, type StartOptions, type TestStatus } from './test-run.ts';
import { dropDeadWorker, startJoinedWorkers } from './worker-changes.ts';
import { readTallies, waitForAcks, waitForWorkers } from './worker-acks.ts';

export type { StartOptions, TestStatus } from './test-run.ts';

export class TestController implements RampHost {
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
  private readonly redis: RedisWatch;

  constructor(readonly ctx: Ctx) {
    this.redis = new RedisWatch(ctx);
  }

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
    const workers = await waitForWorkers(ctx);

    await this.resetAbandoned();
    const { epoch, generation } = await beginTest(ctx, this.id, this.leaseSeconds());
    const params = { ...scenario.params, ...options.params };
    const run = newRun({ options, scenarioPath, absolute, scenario, shape, snapshot: workers.map((w) => w.id), epoch, generation, nowMs: ctx.clock.now() });
    try {
      await clearRuntimeState(ctx, { metrics: true });
      await ctx.backend.send(['SET', ctx.keys.cursor(), 0]);
      await prepareResources(ctx, scenario, params);
      // The test's clock starts once the workers can run users (a cold worker loads its scenario first): its duration is the span users ran.
      await waitForAcks(ctx, run, await broadcast(ctx, epoch, 'start_test', run.payload, run.snapshot), 'start_test');
      run.aggregator = new ResultAggregator(epoch, ctx.clock.now(), run.aggregator.mode, scenarioPath);
      await timeline(this.ctx, run, 'start', `scenario ${scenarioPath}, ${shape ? `load shape ${describeShape(shape)}` : `target ${options.users} users`}`);
      await this.transition('PREPARING', 'RUNNING', false, epoch);
    } catch (err) {
      await this.endTest('PREPARING', epoch).catch(() => {});
      throw err;
    }
    this.run = run;
    run.aggregator.users(ctx.clock.now(), 0);
    await timeline(this.ctx, run, 'running');
    // The spawn rate counts from here: the start's wait for its workers (up to START_ACK_MS) spawns no user.
    run.runningAt = run.lastRampAt = performance.now();
    this.log.info('test running', {
      epoch, users: options.users, spawnRate: options.spawnRate, workers: run.snapshot, mode: run.aggregator.mode, ...(shape ? { shape: describeShape(shape) } : {}),
    });
    run.ramp = setInterval(() => void rampStep(this, run), RAMP_TICK_MS);
    void rampStep(this, run);
    if (options.durationMs) run.durationTimer = setTimeout(() => void this.stop('duration reached').catch(() => {}), options.durationMs);
    return { epoch, finished: run.finished };
  }

  async setUsers(users: number): Promise<void> {
    const run = this.run;
    if (!run || this.stopping) throw new ConflictError('no test is running: start one first');
    if (run.shape && run.shape.kind !== 'rate-stages') throw new ConflictError(`the test follows its load shape (${run.shape.kind}): its users change with it`);
    run.target = users;
    run.payload.target_users = users;
    await timeline(this.ctx, run, 'users', `target ${users}`);
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
        await timeline(this.ctx, run, 'stop', reason);
        run.aggregator.workersSeen(await readWorkers(ctx)); // a test shorter than a monitor pass is seen once at least
        const sent = await broadcast(ctx, run.epoch, 'stop_test', { reason }, run.snapshot);
        const silent = await waitForAcks(ctx, run, sent, 'stop_test');
        for (const worker of silent) run.accounting.note(`worker ${worker} did not confirm its stop: its last metrics may be missing`);
        this.take(run, await readBatches(ctx, run.cursors));
        const lost = run.aggregator.workersLost;
        // A worker acknowledges a stop once its count is written (or gave up writing it): without one, what its
        // last batches held is unknown, and saying nothing would report fewer requests than were sent.
        for (const worker of await readTallies(ctx, run, [...sent.keys(), ...lost])) {
          if (!silent.includes(worker) && !lost.includes(worker)) run.accounting.note(`worker ${worker}: its final count of requests could not be read, so its last metrics may be missing`);
        }
        run.aggregator.users(ctx.clock.now(), 0);
        await clearRuntimeState(ctx, { metrics: false });
        await timeline(this.ctx, run, 'stopped', reason, 0);
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
    sayAbandoned(this.log, run, why, how);
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

  /** The test is the running one and is not stopping (the ramp's and the monitor's test). */
  runs(run: Run): boolean {
    return this.run === run && !this.stopping;
  }

  private async monitor(): Promise<void> {
    const running = this.run;
    const lost = running && this.redis.check(running.epoch);
    if (running && lost) this.abandon(running, lost, 'redis lost');
    if (this.monitorBusy) return;
    this.monitorBusy = true;
    try {
      let run = this.run;
      const [epoch, generation] = (await this.ctx.backend.pipeline([['GET', this.ctx.keys.testEpoch()], ['GET', this.ctx.keys.generation()]])) as (string | null)[];
      this.redis.answered();
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
      if (this.redis.heardLongEnough()) for (const w of workers.filter((w) => !w.alive)) await dropDeadWorker(this.ctx, w, run, !!this.stopping);
      if (run && !this.stopping) {
        await startJoinedWorkers(this.ctx, run, workers);
        this.take(run, await readBatches(this.ctx, run.cursors));
        run.aggregator.users(this.ctx.clock.now(), run.assigned);
        run.aggregator.workersSeen(workers);
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

  /** STOPPING (or a failed start's PREPARING) → IDLE and the lease given back, in one step (endTest.lua). */
  private async endTest(from: TestState, epoch: number): Promise<void> {
    // No lease renewal may land after the lease is given back: new ones are held off, one in flight is waited for
    // (bounded, should the monitor itself be what ends the test).
    this.leaseEnding = true;
    try {
      for (let waited = 0; this.monitorBusy && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      await endTest(this.ctx, from, epoch, this.id);
    } finally {
      this.leaseEnding = false;
    }
  }

  private leaseSeconds(): number {
    return Math.ceil(this.ctx.config.deadAfter * 2);
  }

  private transition(from: TestState, to: TestState, bump: boolean, expectEpoch?: number): Promise<number> {
    return transitionState(this.ctx, from, to, bump, expectEpoch);
  }

  private async state(): Promise<TestState> {
    return (((await this.ctx.backend.send(['GET', this.ctx.keys.testState()])) as string | null) ?? 'IDLE') as TestState;
  }
}
