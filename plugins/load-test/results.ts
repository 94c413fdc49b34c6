// What a test produced, as the orchestrator merges it from the workers'
// batches: one summary per metric, their total, errors by kind, and a series
// per second for the charts.
import { decodeHistogram, newHistogram, percentileMs, type Histogram } from './histogram.ts';

export interface MetricSummary {
  name: string;
  /** http: requests, counted in the total; custom: the scenario's own measurements. */
  kind: 'http' | 'custom' | 'total';
  count: number;
  errors: number;
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
  hist: string;
  errorKinds: Record<string, number>;
}

interface Second {
  count: number;
  errors: number;
  histogram: Histogram;
}

/** Merges batches of one test. Histograms add exactly; nothing is sampled. */
export class ResultAggregator {
  private readonly perMetric = new Map<string, { kind: 'http' | 'custom'; count: number; errors: number; histogram: Histogram }>();
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
    if (!metric) this.perMetric.set(batch.metric, (metric = { kind: batch.kind, count: 0, errors: 0, histogram: newHistogram() }));
    metric.count += batch.count;
    metric.errors += batch.errors;
    this.dropped += batch.dropped;
    if (histogram) metric.histogram.add(histogram);
    for (const [message, n] of Object.entries(batch.errorKinds)) {
      const key = `${batch.metric}\u0000${message}`;
      this.errorKinds.set(key, (this.errorKinds.get(key) ?? 0) + n);
    }
    if (batch.kind !== 'http') return; // the per-second series are of requests
    const t = Math.max(0, Math.floor(batch.ts - this.startedAt / 1000));
    let second = this.seconds.get(t);
    if (!second) this.seconds.set(t, (second = { count: 0, errors: 0, histogram: newHistogram() }));
    second.count += batch.count;
    second.errors += batch.errors;
    if (histogram) second.histogram.add(histogram);
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
      .map(([name, m]) => summarize(name, m.kind, m.count, m.errors, m.histogram, durationS));
    const all = newHistogram();
    let count = 0;
    let errors = 0;
    for (const m of this.perMetric.values()) {
      if (m.kind !== 'http') continue; // the total is of requests
      if (m.histogram.totalCount) all.add(m.histogram);
      count += m.count;
      errors += m.errors;
    }
    const last = Math.max(-1, ...this.seconds.keys(), ...this.usersAt.keys());
    const series: SeriesPoint[] = [];
    let users = 0;
    for (let t = 0; t <= last; t++) {
      users = this.usersAt.get(t) ?? users;
      const s = this.seconds.get(t);
      series.push({
        t,
        users,
        rps: s?.count ?? 0,
        errors: s?.errors ?? 0,
        p50: s ? percentileMs(s.histogram, 50) : 0,
        p95: s ? percentileMs(s.histogram, 95) : 0,
        p99: s ? percentileMs(s.histogram, 99) : 0,
      });
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
      total: summarize('total', 'total', count, errors, all, durationS),
      errors: [...this.errorKinds.entries()]
        .map(([key, n]) => ({ metric: key.split('\u0000')[0]!, message: key.split('\u0000')[1]!, count: n }))
        .sort((a, b) => b.count - a.count),
      droppedIterations: this.dropped,
      series,
      workersLost: [...this.workersLost],
    };
  }
}

function summarize(name: string, kind: MetricSummary['kind'], count: number, errors: number, h: Histogram, durationS: number): MetricSummary {
  return {
    name,
    kind,
    count,
    errors,
    rps: round(count / durationS, 2),
    mean: round(h.totalCount ? h.mean / 1000 : 0, 3),
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
