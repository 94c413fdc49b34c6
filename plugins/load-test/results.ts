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
  mean: number;
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
  p50: number;
  p95: number;
  p99: number;
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
  errors: { metric: string; message: string; count: number }[];
  droppedIterations: number;
  series: SeriesPoint[];
  workersLost: string[];
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
}

interface Merged {
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
  private readonly perMetric = new Map<string, Merged & { kind: 'http' | 'custom' }>();
  /** All requests (the http metrics together). */
  private readonly total: Merged = merged();
  private readonly errorKinds = new Map<string, number>();
  private readonly seconds = new Map<number, Second>();
  private readonly usersAt = new Map<number, number>();
  private dropped = 0;
  peakUsers = 0;
  readonly workersLost: string[] = [];

  constructor(
    readonly epoch: number,
    readonly startedAt: number,
    readonly mode: TestResult['mode'],
    readonly scenario?: string,
  ) {}

  add(batch: Batch): void {
    if (batch.epoch !== this.epoch) return;
    const histogram = batch.count > 0 ? decodeHistogram(batch.hist) : undefined;
    let metric = this.perMetric.get(batch.metric);
    if (!metric) this.perMetric.set(batch.metric, (metric = { kind: batch.kind, ...merged() }));
    mergeInto(metric, batch, histogram);
    this.dropped += batch.dropped;
    for (const [message, n] of Object.entries(batch.errorKinds)) {
      const key = `${batch.metric}\u0000${message}`;
      this.errorKinds.set(key, (this.errorKinds.get(key) ?? 0) + n);
    }
    // The total and the per-second series are of requests and failures; their latencies are the requests'.
    const request = batch.kind === 'http';
    if (!request && !isFailureMetric(batch.metric)) return;
    const t = Math.max(0, Math.floor(batch.ts - this.startedAt / 1000));
    let second = this.seconds.get(t);
    if (!second) this.seconds.set(t, (second = merged()));
    mergeInto(this.total, batch, request ? histogram : undefined);
    mergeInto(second, batch, request ? histogram : undefined);
    if (request) second.point = undefined;
  }

  /** Records the number of running users at a moment (ms). */
  users(nowMs: number, users: number): void {
    this.peakUsers = Math.max(this.peakUsers, users);
    this.usersAt.set(Math.max(0, Math.floor((nowMs - this.startedAt) / 1000)), users);
  }

  result(nowMs: number, endedAt?: number): TestResult {
    const durationS = Math.max(0.001, ((endedAt ?? nowMs) - this.startedAt) / 1000);
    const metrics = [...this.perMetric.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, m]) => summarize(name, m.kind, m, durationS));
    const last = Math.max(-1, ...this.seconds.keys(), ...this.usersAt.keys());
    const series: SeriesPoint[] = [];
    let users = 0;
    for (let t = 0; t <= last; t++) {
      users = this.usersAt.get(t) ?? users;
      const s = this.seconds.get(t);
      if (s) s.point ??= { p50: percentileMs(s.histogram, 50), p95: percentileMs(s.histogram, 95), p99: percentileMs(s.histogram, 99) };
      series.push({ t, users, rps: s?.count ?? 0, errors: s?.errors ?? 0, ...(s?.point ?? { p50: 0, p95: 0, p99: 0 }) });
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
      total: summarize('total', 'total', this.total, durationS),
      errors: [...this.errorKinds.entries()]
        .map(([key, n]) => ({ metric: key.split('\u0000')[0]!, message: key.split('\u0000')[1]!, count: n }))
        .sort((a, b) => b.count - a.count),
      droppedIterations: this.dropped,
      series,
      workersLost: [...this.workersLost],
    };
  }
}

function merged(): Merged {
  return { count: 0, errors: 0, aborted: 0, sum: 0, histogram: newHistogram() };
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

function summarize(name: string, kind: MetricSummary['kind'], m: Merged, durationS: number): MetricSummary {
  const h = m.histogram;
  return {
    name,
    kind,
    count: m.count,
    errors: m.errors,
    aborted: m.aborted,
    rps: round(m.count / durationS, 2),
    mean: round(h.totalCount ? m.sum / h.totalCount : 0, 3),
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
