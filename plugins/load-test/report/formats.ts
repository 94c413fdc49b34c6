// A test's results as people and programs read them: the terminal's summary
// table and progress line, JSON, CSV (one row per metric), and a standalone
// HTML report (uPlot charts inlined: one file that works offline), with the
// test's probes when it had any.
import { scriptJson, uplotCss, uplotScript } from './page-assets.ts';
import { chartsScript } from './page-charts.ts';
import type { ProbeSeries } from '../scenario/probes.ts';
import type { ThresholdOutcome } from '../metrics/thresholds.ts';
import { isFailureMetric, type MetricSummary, type TestResult } from '../metrics/results.ts';

const COLUMNS = ['metric', 'requests', 'errors', 'aborted', 'req/s', 'mean', 'p50', 'p90', 'p95', 'p99', 'max'] as const;

function cells(m: MetricSummary): string[] {
  return [m.name, String(m.count), String(m.errors), String(m.aborted), m.rps.toFixed(1), ms(m.mean), ms(m.p50), ms(m.p90), ms(m.p95), ms(m.p99), ms(m.max)];
}

export function ms(value: number): string {
  return value < 10 ? value.toFixed(2) : value < 1000 ? value.toFixed(1) : value.toFixed(0);
}

export function summaryTable(result: TestResult, outcomes: readonly ThresholdOutcome[] = []): string {
  const rows = [...result.metrics.map(cells), cells(result.total)];
  const all = [[...COLUMNS], ...rows];
  const widths = COLUMNS.map((_c, i) => Math.max(...all.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const lines = [
    `${result.mode === 'arrival-rate' ? 'arrival-rate' : 'users'} test, epoch ${result.epoch}: ${result.durationS.toFixed(1)} s, peak ${result.peakUsers} users (latencies in ms)`,
    fmt(all[0]!),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(0, -1).map(fmt),
    widths.map((w) => '-'.repeat(w)).join('  '),
    fmt(rows.at(-1)!),
  ];
  if (result.mode === 'arrival-rate') lines.push(`dropped iterations: ${result.droppedIterations}`);
  const failedLine = failedApartLine(result);
  if (failedLine) lines.push(failedLine);
  if (result.workers.length > 1) lines.push(`workers: ${result.workers.map((w) => `${w.id}${w.host ? ` on ${w.host}` : ''} (${w.users} users, ${w.requests} requests)`).join(', ')}`);
  if (result.total.aborted) lines.push(`aborted: ${result.total.aborted} requests in flight when the test was stopped (not errors, not in the latencies)`);
  if (result.workersLost.length) lines.push(`workers lost: ${result.workersLost.join(', ')} (their users were reassigned)`);
  if (result.incomplete) lines.push('', `${incompleteHeadline(result)}:`, ...result.incomplete.reasons.map((r) => `  ${r}`));
  if (result.errors.length) {
    lines.push('', 'errors:');
    for (const e of result.errors.slice(0, 20)) lines.push(`  ${String(e.count).padStart(8)}  ${e.metric}: ${e.message}`);
  }
  if (outcomes.length) {
    lines.push('', 'thresholds:');
    for (const o of outcomes) lines.push(`  ${o.ok ? 'ok  ' : 'FAIL'}  ${o.threshold}  (actual ${formatActual(o)})`);
  }
  return lines.join('\n');
}

/**
 * The errors apart, when steps threw: the table's errors count failed requests and steps that threw together
 * (k6's reading); Locust's failure rate is of the requests alone.
 */
export function failedApartLine(result: TestResult): string | undefined {
  const { requests, ofRequests, steps } = result.failed;
  if (!steps) return undefined;
  const pct = ofRequests ? ((requests / ofRequests) * 100).toFixed(2) : '0.00';
  return `errors apart: ${requests} of ${ofRequests} requests failed (${pct}%), ${steps} steps threw (the errors above count both)`;
}

/** "INCOMPLETE results: N requests unaccounted for" (the results are known to miss requests). */
export function incompleteHeadline(result: TestResult): string {
  const n = result.incomplete?.unaccounted ?? 0;
  return `INCOMPLETE results${n ? `: ${n} requests unaccounted for` : ''}`;
}

/** A threshold's actual value, in its own unit. */
export function formatActual(o: ThresholdOutcome): string {
  if (!Number.isFinite(o.actual)) return /checks/.test(o.threshold) ? 'no checks ran' : 'no such metric';
  if (/errors|checks/.test(o.threshold)) return `${(o.actual * 100).toFixed(2)}%`;
  if (/rps/.test(o.threshold)) return o.actual.toFixed(1);
  return `${ms(o.actual)}ms`;
}

export function progressLine(elapsedS: number, users: number, target: number, rps: number, p95: number, errors: number, count: number): string {
  const pct = count ? ((errors / count) * 100).toFixed(2) : '0.00';
  return `[${elapsedS.toFixed(0).padStart(4)}s] users ${users}/${target}  rps ${rps.toFixed(0)}  p95 ${ms(p95)}ms  errors ${errors} (${pct}%)  requests ${count}`;
}

/** Everything: the result, the thresholds' outcomes and the test's probes (when it had any). */
export function resultJson(result: TestResult, outcomes: readonly ThresholdOutcome[], probes: readonly ProbeSeries[] = []): string {
  return JSON.stringify({ ...result, thresholds: outcomes, probes }, null, 2);
}

const quote = (t: string) => (/[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);

/** The statistics, one row per metric and the total (Locust's stats CSV): `--out csv` and the page's download. */
export function resultCsv(result: TestResult): string {
  const header = 'metric,requests,errors,aborted,rps,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,min_ms,current_rps';
  const row = (m: MetricSummary) => [quote(m.name), m.count, m.errors, m.aborted, m.rps, m.mean, m.p50, m.p90, m.p95, m.p99, m.max, m.min, m.currentRps].join(',');
  return [header, ...result.metrics.map(row), row(result.total)].join('\n');
}

/**
 * The failures by metric and kind, with the full text of the first and last (Locust's failures and exceptions
 * CSVs): `failures` are those of requests and checks, `exceptions` those of steps and hooks that threw.
 */
export function failuresCsv(result: TestResult, which: 'failures' | 'exceptions'): string {
  const header = 'metric,error,count,first_at,last_at,first,last';
  const rows = failuresOf(result, which).map((e) =>
    [quote(e.metric), quote(e.message), e.count, new Date(e.firstAt).toISOString(), new Date(e.lastAt).toISOString(), quote(e.first), quote(e.last)].join(','),
  );
  return [header, ...rows].join('\n');
}

export function failuresOf(result: TestResult, which: 'failures' | 'exceptions'): TestResult['errors'] {
  return result.errors.filter((e) => isFailureMetric(e.metric) === (which === 'exceptions'));
}

export function resultHtml(result: TestResult, outcomes: readonly ThresholdOutcome[], probes: readonly ProbeSeries[] = []): string {
  const esc = (t: unknown) => String(t).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  const table = (head: string[], rows: unknown[][], rowClass: (i: number) => string = () => '') =>
    `<table><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${rows.map((r, i) => `<tr class="${rowClass(i)}">${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</table>`;
  const failed = outcomes.filter((o) => !o.ok);
  const apart = failedApartLine(result);
  const errorPct = result.total.count ? ((result.total.errors / result.total.count) * 100).toFixed(2) : '0.00';
  const verdict = !outcomes.length
    ? ''
    : failed.length
      ? `<p class="verdict fail" data-testid="verdict">FAILED: ${failed.length} of ${outcomes.length} thresholds (${failed.map((o) => esc(o.threshold)).join(', ')})</p>`
      : `<p class="verdict ok" data-testid="verdict">passed: all ${outcomes.length} thresholds</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>coord load test — epoch ${result.epoch}</title>
<style>${uplotCss}</style>
<style>body{font:14px system-ui,sans-serif;margin:20px;color:#222}table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:3px 10px;text-align:right}td:first-child,th:first-child{text-align:left}
#charts,#probes{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px;max-width:1400px}.chart{border:1px solid #ddd;padding:4px;min-width:0;overflow:hidden}
tr.fail td{color:#b00;font-weight:bold;background:#fdecec}.verdict{padding:6px 10px;font-weight:bold}.verdict.fail{background:#fdecec;color:#b00}.verdict.ok{background:#eaf7ee;color:#161}</style></head><body>
<h1>Load test, epoch ${result.epoch}</h1>
${verdict}
${result.incomplete ? `<p class="verdict fail" data-testid="incomplete">${esc(incompleteHeadline(result))}: ${result.incomplete.reasons.map(esc).join('; ')}</p>` : ''}
<p>${esc(result.scenario ?? '')} · ${result.mode} · ${result.durationS.toFixed(1)} s · peak ${result.peakUsers} users · ${result.total.count} requests · ${result.total.errors} errors (${errorPct}%)${result.total.aborted ? ` · ${result.total.aborted} aborted` : ''} · p95 ${ms(result.total.p95)} ms${result.mode === 'arrival-rate' ? ` · ${result.droppedIterations} dropped iterations` : ''}</p>
${outcomes.length ? `<h2>Thresholds</h2>${table(['threshold', 'actual', 'result'], outcomes.map((o) => [o.threshold, formatActual(o), o.ok ? 'ok' : 'FAIL']), (i) => (outcomes[i]!.ok ? 'ok' : 'fail'))}` : ''}
<h2>Charts</h2><div id="charts"></div>
<h2>Metrics (ms)</h2>${table([...COLUMNS], [...result.metrics, result.total].map(cells))}
${apart ? `<p data-testid="failed-apart">${esc(apart)}</p>` : ''}
${result.workers.length ? `<h2>Workers</h2>${table(['worker', 'host', 'most users', 'requests'], result.workers.map((w) => [w.id, w.host ?? '', w.users, w.requests]))}` : ''}
${result.errors.length ? `<h2>Errors</h2>${table(['metric', 'error', 'count'], result.errors.map((e) => [e.metric, e.message, e.count]))}` : ''}
${probes.length ? `<h2>Probes</h2>${table(['probe', 'values', 'failed runs', 'last error'], probes.map((p) => [p.name, p.points.length, Object.values(p.errors).reduce((a, b) => a + b, 0), p.lastError ?? '']))}<div id="probes" class="probes"></div>` : ''}
<script>${uplotScript}</script>
<script>${chartsScript}</script>
<script>CoordCharts.draw(document.getElementById('charts'), ${scriptJson(result)});${probes.length ? `CoordCharts.drawProbes(document.getElementById('probes'), ${scriptJson(probes)});` : ''}</script>
</body></html>`;
}
