// What a test produced, as the orchestrator merges it from the workers'
// batches: one summary per metric, their total, errors by kind, and a series
// per second for the charts. result() runs on every status (each second while
// `coord load run` shows progress, on each poll of the page) in a process that
// may host a worker, whose latencies it would delay: it costs the same at the
// tenth minute as at the first (the series' seconds are summarized once, the
// total is added up as batches come, the mean is a sum over a count).
//
// The total counts what can fail: every request (HTTP, JSON-RPC, WebSocket
// connects and round trips) and every failed iteration or hook (the
// step:<name> and hook:<name> metrics, which hold failures only), so a test
// whose steps throw before any request still shows its errors, in the
// progress line, the page and the errors<N% threshold. The total's
// latencies are the requests' alone. Requests the test's own stop cut off
// in flight (Ctrl-C) are "aborted": counted apart, in no count, error or
// latency, since they say nothing about the target.
import type { Incomplete } from './accounting.ts';
import { decodeHistogram, newHistogram, percentileMs, type Histogram } from './histogram.ts';

/** A failed step or hook, as the worker records it (the metric holds failures only). */
export function isFailureMetric(name: string): boolean {
  return name.startsWith('step:') || name.startsWith('hook:');
}

/** A k6-style check (user.check): count = evaluations, errors = failures. */
export function isCheckMetric(name: string): boolean {
  return name.startsWith('check:');
}

export interface MetricSummary {
  name: string;
  /** http: requests, counted in the total; custom: the scenario's own measurements (failures of steps and hooks count in the total too). */
  kind: 'http' | 'custom' | 'total';
  count: number;
  errors: number;
  /** Requests the test's stop aborted in flight: not in count, errors or the latencies. */
  aborted: number;
  /** Requests per second over the test's running time. */
  rps: number;
  /** Requests in the last whole second (of the test so far, or of its end). */
  currentRps: number;
  mean: number;
  /** The fastest request (ms). */
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

export interface SeriesPoint {
  /** Seconds since the test started. */
  t: number;
  users: number;
  rps: number;
  errors: number;
  /** The second's latency percentiles (ms); null in a second with no request, which a chart draws as a gap, not as 0 ms. */
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface TestResult {
  epoch: number;
  scenario?: string;
  startedAt: number;
  endedAt?: number;
  /** Seconds the test ran (so far). */
  durationS: number;
  mode: 'users' | 'arrival-rate';
  peakUsers: number;
  metrics: MetricSummary[];
  total: MetricSummary;
  /** Failures by metric and kind (message), with the full text of the first and last one and when they came (ms since 1970). */
  errors: FailureKind[];
  droppedIterations: number;
  /**
   * The total's errors apart: HTTP requests that failed (of those sent), and steps or hooks that threw. The
   * total counts both (k6's reading); Locust's failure rate is the first alone.
   */
  failed: { requests: number; ofRequests: number; steps: number };
  series: SeriesPoint[];
  /** The workers that took part: where they ran, their most users at once, the HTTP requests read from them. */
  workers: WorkerPart[];
  workersLost: string[];
  /** Set when the results are known to miss requests (accounting.ts): how many, and why. */
  incomplete?: Incomplete;
}

export interface WorkerPart {
  id: string;
  host: string | null;
  users: number;
  requests: number;
}

export interface FailureKind {
  metric: string;
  /** The kind: 'HTTP 500', 'ECONNREFUSED', 'timeout', an exception's first line. */
  message: string;
  count: number;
  /** The full text of the first failure of this kind (an HTTP error's body, an exception's stack). */
  first: string;
  last: string;
  firstAt: number;
  lastAt: number;
}

/** One worker batch as read back from a metric:<id> stream. */
export interface Batch {
  metric: string;
  kind: 'http' | 'custom';
  worker: string;
  epoch: number;
  ts: number;
  count: number;
  errors: number;
  dropped: number;
  /** Requests the test's stop aborted in flight (absent from batches written before it was counted). */
  aborted?: number;
  hist: string;
  /** Sum of the batch's latencies in ms. */
  sum: number;
  errorKinds: Record<string, number>;
  /** Per error kind, the full text of the batch's first and last failure of that kind. */
  errorSamples?: Record<string, { first: string; last: string }>;
  /** The worker's recorder that wrote it (with seq, identifies a batch; absent from batches of older workers). */
  writer?: string;
  /** Its number among its writer's batches of this metric. */
  seq?: number;
  /** Its writer's HTTP requests up to and including this batch. */
  total?: number;
}

interface Merged {
  /** Requests by second of the test: the current rate (the per-metric ones; the total's is the series'). */
  perSecond?: Map<number, number>;
  count: number;
  errors: number;
  aborted: number;
  /** Sum of the latencies in ms: the exact mean, where the histogram's would iterate over all its buckets. */
  sum: number;
  histogram: Histogram;
}

interface Second extends Merged {
  /** Its point of the series, until a batch changes it. */
  point?: Pick<SeriesPoint, 'p50' | 'p95' | 'p99'>;
}

/** Merges batches of one test. Histograms add exactly; nothing is sampled. */
export class ResultAggregator {
  private perMetric = new Map<string, Merged & { kind: 'http' | 'custom' }>();
  /** All requests (the http metrics together). */
  private total: Merged = merged();
  private errorKinds = new Map<string, FailureKind>();
  private seconds = new Map<number, Second>();
  private usersAt = new Map<number, number>();
  private dropped = 0;
  private lastUsers = 0;
  /** The last reset (ms): batches written before it are skipped. */
  private resetAt: number | undefined;
  peakUsers = 0;
  private byWorker = new Map<string, WorkerPart>();
  readonly workersLost: string[] = [];
  /** When the results began: the test's start, or its last reset (ms). */
  startedAt: number;

  constructor(
    readonly epoch: number,
    startedAt: number,
    readonly mode: TestResult['mode'],
    readonly scenario?: string,
  ) {
    this.startedAt = startedAt;
  }

  /**
   * Zeroes the results (the page's "reset stats", as Locust's): what every worker recorded up to now is
   * dropped, and the test's time starts again at `nowMs`. Batches written before it are skipped when they
   * are read later; a worker's batch written after it counts whole (up to a second recorded before it).
   */
  reset(nowMs: number): void {
    this.startedAt = this.resetAt = nowMs;
    this.perMetric = new Map();
    this.total = merged();
    this.errorKinds = new Map();
    this.seconds = new Map();
    this.usersAt = new Map();
    this.dropped = 0;
    this.peakUsers = 0;
    this.byWorker = new Map();
    this.workersLost.length = 0;
    this.users(nowMs, this.lastUsers);
  }

  add(batch: Batch): void {
    if (batch.epoch !== this.epoch || (this.resetAt !== undefined && batch.ts * 1000 < this.resetAt)) return;
    const histogram = batch.count > 0 ? decodeHistogram(batch.hist) : undefined;
    const t = Math.max(0, Math.floor(batch.ts - this.startedAt / 1000));
    let metric = this.perMetric.get(batch.metric);
    if (!metric) this.perMetric.set(batch.metric, (metric = { kind: batch.kind, ...merged(), perSecond: new Map() }));
    mergeInto(metric, batch, histogram);
    metric.perSecond!.set(t, (metric.perSecond!.get(t) ?? 0) + batch.count);
    this.dropped += batch.dropped;
    for (const [message, n] of Object.entries(batch.errorKinds)) this.addFailures(batch, message, n);
    // The total and the per-second series are of requests and failures; their latencies are the requests'.
    const request = batch.kind === 'http';
    if (request) this.worker(batch.worker).requests += batch.count + (batch.aborted ?? 0);
    if (!request && !isFailureMetric(batch.metric)) return;
    let second = this.seconds.get(t);
    if (!second) this.seconds.set(t, (second = merged()));
    mergeInto(this.total, batch, request ? histogram : undefined);
    mergeInto(second, batch, request ? histogram : undefined);
    if (request) second.point = undefined;
  }

  private addFailures(batch: Batch, message: string, n: number): void {
    const key = `${batch.metric}\u0000${message}`;
    const sample = batch.errorSamples?.[message] ?? { first: message, last: message };
    const at = Math.round(batch.ts * 1000);
    const kind = this.errorKinds.get(key);
    if (!kind) {
      this.errorKinds.set(key, { metric: batch.metric, message, count: n, first: sample.first, last: sample.last, firstAt: at, lastAt: at });
      return;
    }
    kind.count += n;
    // Workers' batches come in any order: the first is the earliest one's, the last the latest one's.
    if (at < kind.firstAt) Object.assign(kind, { first: sample.first, firstAt: at });
    if (at >= kind.lastAt) Object.assign(kind, { last: sample.last, lastAt: at });
  }

  /** The workers as their heartbeats say now: where each runs, and its users (the most at once is kept). */
  workersSeen(workers: readonly { id: string; host?: string; users: number }[]): void {
    for (const w of workers) {
      if (w.users === 0 && !this.byWorker.has(w.id)) continue; // idle beside this test
      const part = this.worker(w.id);
      part.host = w.host ?? part.host;
      part.users = Math.max(part.users, w.users);
    }
  }

  private worker(id: string): WorkerPart {
    let part = this.byWorker.get(id);
    if (!part) this.byWorker.set(id, (part = { id, host: null, users: 0, requests: 0 }));
    return part;
  }

  /** Records the number of running users at a moment (ms). */
  users(nowMs: number, users: number): void {
    this.lastUsers = users;
    this.peakUsers = Math.max(this.peakUsers, users);
    this.usersAt.set(Math.max(0, Math.floor((nowMs - this.startedAt) / 1000)), users);
  }

  result(nowMs: number, endedAt?: number): TestResult {
    const durationS = Math.max(0.001, ((endedAt ?? nowMs) - this.startedAt) / 1000);
    // The last whole second: the one before the second the test is in (or ended in).
    const lastWhole = Math.floor(durationS) - 1;
    const metrics = [...this.perMetric.entries()]
      // an arrival-rate test's 'iterations' carries only its dropped ones (droppedIterations): a row of zeros read as "none ran"
      .filter(([, m]) => m.count > 0 || m.errors > 0 || m.aborted > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, m]) => summarize(name, m.kind, m, durationS, m.perSecond!.get(lastWhole) ?? 0));
    const last = Math.max(-1, ...this.seconds.keys(), ...this.usersAt.keys());
    const series: SeriesPoint[] = [];
    let users = 0;
    for (let t = 0; t <= last; t++) {
      users = this.usersAt.get(t) ?? users;
      const s = this.seconds.get(t);
      if (s && s.histogram.totalCount > 0) s.point ??= { p50: percentileMs(s.histogram, 50), p95: percentileMs(s.histogram, 95), p99: percentileMs(s.histogram, 99) };
      series.push({ t, users, rps: s?.count ?? 0, errors: s?.errors ?? 0, ...(s?.point ?? NO_LATENCY) });
    }
    return {
      epoch: this.epoch,
      scenario: this.scenario,
      startedAt: this.startedAt,
      endedAt,
      durationS,
      mode: this.mode,
      peakUsers: this.peakUsers,
      metrics,
      total: summarize('total', 'total', this.total, durationS, this.seconds.get(lastWhole)?.count ?? 0),
      errors: [...this.errorKinds.values()].map((k) => ({ ...k })).sort((a, b) => b.count - a.count),
      droppedIterations: this.dropped,
      failed: failedApart(metrics),
      series,
      workers: [...this.byWorker.values()].map((w) => ({ ...w })).sort((a, b) => a.id.localeCompare(b.id)),
      workersLost: [...this.workersLost],
    };
  }
}

function failedApart(metrics: readonly MetricSummary[]): TestResult['failed'] {
  const failed = { requests: 0, ofRequests: 0, steps: 0 };
  for (const m of metrics) {
    if (m.kind === 'http') (failed.requests += m.errors), (failed.ofRequests += m.count);
    else if (isFailureMetric(m.name)) failed.steps += m.errors;
  }
  return failed;
}

const NO_LATENCY = { p50: null, p95: null, p99: null } as const;

function merged(): Merged {
  // Made when first read: a test's first totals exist before any latency does, and the histogram package
  // (~100 ms to load) should not hold its start.
  let histogram: Histogram | undefined;
  return {
    count: 0,
    errors: 0,
    aborted: 0,
    sum: 0,
    get histogram() {
      histogram ??= newHistogram();
      return histogram;
    },
  };
}

/** Adds a batch's counts; its latencies only with its histogram (a failure's duration is no request latency). */
function mergeInto(into: Merged, batch: Batch, histogram: Histogram | undefined): void {
  into.count += batch.count;
  into.errors += batch.errors;
  into.aborted += batch.aborted ?? 0;
  if (!histogram) return;
  into.sum += batch.sum;
  into.histogram.add(histogram);
}

function summarize(name: string, kind: MetricSummary['kind'], m: Merged, durationS: number, currentRps: number): MetricSummary {
  const h = m.histogram;
  return {
    name,
    kind,
    count: m.count,
    errors: m.errors,
    aborted: m.aborted,
    rps: round(m.count / durationS, 2),
    currentRps,
    mean: round(h.totalCount ? m.sum / h.totalCount : 0, 3),
    min: h.totalCount ? h.minNonZeroValue / 1000 : 0,
    p50: percentileMs(h, 50),
    p90: percentileMs(h, 90),
    p95: percentileMs(h, 95),
    p99: percentileMs(h, 99),
    max: h.totalCount ? h.maxValue / 1000 : 0,
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
