// One test as the orchestrator runs it: what a start asks for (StartOptions),
// what the status reports (TestStatus), and the running test's own state
// (Run), which the controller, the ramp and the monitor share.
import type { TestState } from '../contract.ts';
import type { StartPayload } from '../envelope.ts';
import { RequestAccounting } from '../metrics/accounting.ts';
import { ResultAggregator, type TestResult } from '../metrics/results.ts';
import type { CheckedScenario } from '../scenario/scenario.ts';
import type { LoadShape, Stage } from '../scenario/shape.ts';
import { stagesDurationMs } from '../scenario/shape.ts';
import type { Logger } from '../../../entries/plugin.ts';
import type { WorkerView } from './keyspace.ts';

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

export interface Run {
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
export type Abandoned = 'taken over' | 'state lost' | 'redis lost' | 'interrupted';

/** How long a start waits for alive workers to have loaded the scenario before the test runs without them. */
export const START_ACK_MS = 120_000;
/** How often users are added or removed towards the target (and a load shape looked at). */
export const RAMP_TICK_MS = 100;
/** A spawn rate that reaches any target in one tick (a load shape's stages, a shape function without spawnRate). */
export const AT_ONCE = 1e9;

/** How long a test runs from its first users, when that is known: its duration, or its stages' total (the shorter). */
export function plannedLength(options: StartOptions, shape: LoadShape | undefined): number | undefined {
  const lengths = [options.durationMs, shape && shape.kind !== 'function' ? stagesDurationMs(shape.stages) : undefined];
  const known = lengths.filter((ms): ms is number => ms !== undefined && ms > 0);
  return known.length ? Math.min(...known) : undefined;
}

export function describeShape(shape: LoadShape): string {
  const stages = (list: Stage[], unit: string) => list.map((s) => `${s.durationMs / 1000}s:${Math.round(s.target * 100) / 100}${unit}`).join(',');
  if (shape.kind === 'stages') return `stages ${stages(shape.stages, '')}`;
  if (shape.kind === 'rate-stages') return `rate stages from ${shape.startRate}/s ${stages(shape.stages, '/s')}`;
  return `shape function of ${shape.where}`;
}

export function settingsOf(run: Run): NonNullable<TestStatus['settings']> {
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

/**
 * A test about to start: its first target (0 for stages, which ramp from
 * there), its first arrival rate, the start_test payload its workers get, and
 * results that count from `nowMs`. `scenarioPath` as the user gave it, `absolute` resolved.
 */
export function newRun(start: {
  options: StartOptions;
  scenarioPath: string;
  absolute: string;
  scenario: CheckedScenario;
  shape: LoadShape | undefined;
  snapshot: string[];
  epoch: number;
  generation: string;
  nowMs: number;
}): Run {
  const { options, shape, epoch } = start;
  const arrival = options.rate !== undefined || shape?.kind === 'rate-stages';
  const firstRate = shape?.kind === 'rate-stages' ? shape.startRate : options.rate;
  let finish!: (r: TestResult) => void;
  const finished = new Promise<TestResult>((r) => (finish = r));
  const firstUsers = shape?.kind === 'stages' ? 0 : options.users;
  const runMs = plannedLength(options, shape);
  const payload: StartPayload = {
    scenario: start.absolute,
    params: options.params ?? {},
    target_users: firstUsers,
    rate: firstRate,
    metrics: options.metrics,
    ...(shape?.kind === 'rate-stages' ? { arrival: true } : {}),
    ...(runMs === undefined ? {} : { run_ms: runMs }),
  };
  return {
    epoch,
    generation: start.generation,
    options,
    scenarioPath: start.absolute,
    scenario: start.scenario,
    payload,
    aggregator: new ResultAggregator(epoch, start.nowMs, arrival ? 'arrival-rate' : 'users', start.scenarioPath),
    accounting: new RequestAccounting(epoch),
    cursors: new Map(),
    snapshot: start.snapshot,
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
}

/** Says why a test ends here without its normal stop: in the log, and in its results' accounting (which marks them incomplete). */
export function sayAbandoned(log: Logger, run: Run, why: string, how: Abandoned): void {
  if (how === 'state lost') {
    log.error('the test lost its coordination state: ending it here', { epoch: run.epoch, why });
    run.accounting.note("Redis lost the test's state (restarted empty?): requests after that are not in the results");
  } else if (how === 'redis lost') {
    log.error(`${why}: ending the test here with the results read so far`, { epoch: run.epoch });
    run.accounting.note(`${why}: the test ended there, and the requests its workers recorded after the last batch read are not in the results`);
  } else if (how === 'interrupted') {
    log.warn(`${why}: ending the test here with the results read so far`, { epoch: run.epoch });
    run.accounting.note(`${why}: the test ended before its workers confirmed their stop, so their last metrics may be missing`);
  } else log.warn('the test was taken over by another orchestrator: ending it here', { epoch: run.epoch, why });
}
