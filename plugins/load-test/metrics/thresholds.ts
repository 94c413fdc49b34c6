// Pass/fail criteria on the results: 'p95<200ms', 'errors<1%', 'rps>100',
// 'checks>99%', 'GET /api:p99<=1s' (a metric name, then a colon; for checks,
// a check's name). A test that fails one exits with 99 (as k6 does), so CI
// can gate on it. The total's errors include failed steps and hooks.
import { isCheckMetric, type MetricSummary, type TestResult } from './results.ts';
import { InputError } from '../errors.ts';

export type Stat = 'p50' | 'p90' | 'p95' | 'p99' | 'max' | 'mean' | 'errors' | 'rps' | 'checks';

export interface Threshold {
  /** As the user wrote it. */
  text: string;
  /** A metric name, or undefined for all requests together. */
  metric?: string;
  stat: Stat;
  op: '<' | '<=' | '>' | '>=';
  /** Milliseconds for latencies, a fraction (0.01) for errors and checks, per second for rps. */
  value: number;
}

export interface ThresholdOutcome {
  threshold: string;
  actual: number;
  ok: boolean;
}

const SYNTAX = /^(?:(.+):)?(p50|p90|p95|p99|max|mean|avg|errors|rps|checks)\s*(<=|<|>=|>)\s*(\d+(?:\.\d+)?)\s*(ms|s|%)?$/;

export function parseThreshold(text: string): Threshold {
  const m = SYNTAX.exec(text.trim());
  const fail = (why: string): never => {
    throw new InputError(`--threshold "${text}" ${why}`);
  };
  if (!m) return fail('does not parse: expected STAT OP VALUE such as p95<200ms, errors<1%, rps>100, checks>99% (optionally METRIC: first)');
  const stat = (m[2] === 'avg' ? 'mean' : m[2]) as Stat;
  const unit = m[5];
  let value = Number(m[4]);
  if (stat === 'checks') {
    if (unit !== '%') fail('gives checks without %: expected the share of checks passed, such as checks>99%');
    value = value / 100;
  } else if (stat === 'errors') {
    if (unit !== '%' && unit !== undefined) fail('gives errors in ms or s: expected a percentage such as errors<1%');
    value = unit === '%' ? value / 100 : value;
  } else if (stat === 'rps') {
    if (unit !== undefined) fail('gives rps a unit: expected a number of requests per second such as rps>100');
  } else {
    if (unit === '%') fail(`gives ${stat} in %: expected a time such as ${stat}<200ms`);
    if (unit === undefined) fail(`has no unit: expected ms or s, e.g. ${stat}<${m[4]}ms`);
    value = unit === 's' ? value * 1000 : value;
  }
  return { text: text.trim(), metric: m[1]?.trim() || undefined, stat, op: m[3] as Threshold['op'], value };
}

export function evaluateThresholds(thresholds: readonly Threshold[], result: TestResult): ThresholdOutcome[] {
  return thresholds.map((t) => {
    let actual: number;
    if (t.stat === 'checks') actual = checksPassed(result, t.metric);
    else {
      const summary: MetricSummary | undefined = t.metric === undefined ? result.total : result.metrics.find((m) => m.name === t.metric);
      actual = summary ? statOf(summary, t.stat) : NaN;
    }
    const ok = Number.isFinite(actual) && compare(actual, t.op, t.value);
    return { threshold: t.text, actual, ok };
  });
}

/** The share of checks passed (all of them, or those of one name); NaN when none ran. */
function checksPassed(result: TestResult, name: string | undefined): number {
  const checks = result.metrics.filter((m) => (name === undefined ? isCheckMetric(m.name) : m.name === `check:${name}`));
  const count = checks.reduce((n, m) => n + m.count, 0);
  return count === 0 ? NaN : 1 - checks.reduce((n, m) => n + m.errors, 0) / count;
}

function statOf(s: MetricSummary, stat: Exclude<Stat, 'checks'>): number {
  if (stat === 'errors') return s.count === 0 ? 0 : s.errors / s.count;
  return s[stat];
}

function compare(a: number, op: Threshold['op'], b: number): boolean {
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}
