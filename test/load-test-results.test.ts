// The orchestrator's merge of worker batches (ResultAggregator): exact
// percentiles of all requests, the total of the HTTP metrics only, the mean
// from the batches' sums, and a per-second series that follows late batches.
import t from 'tap';
import { encodeHistogram, HISTOGRAM_PRECISION, newHistogram, recordMs } from '../plugins/load-test/metrics/histogram.ts';
import { ResultAggregator, type Batch } from '../plugins/load-test/metrics/results.ts';
import { exactPercentile } from './support/load.ts';

/** A worker's batch of these latencies (ms), flushed at `ts` seconds after the test started at 0. */
function batch(metric: string, latencies: number[], ts: number, kind: Batch['kind'] = 'http', worker = 'w1'): Batch {
  const histogram = newHistogram();
  for (const ms of latencies) recordMs(histogram, ms);
  const sum = latencies.reduce((a, b) => a + b, 0);
  return { metric, kind, worker, epoch: 1, ts, count: latencies.length, errors: 0, dropped: 0, hist: encodeHistogram(histogram), sum, errorKinds: {} };
}

const spread = (n: number, from: number, to: number) => Array.from({ length: n }, (_, i) => from + ((to - from) * i) / (n - 1));
const near = (actual: number, expected: number) => Math.abs(actual - expected) <= expected * HISTOGRAM_PRECISION + 0.001;

t.test('two workers, two metrics and a custom one: exact merge, mean from the sums, total of requests only', async (t) => {
  const agg = new ResultAggregator(1, 0, 'users');
  const a1 = spread(300, 10, 300);
  const a2 = spread(200, 5, 50);
  const b = spread(100, 100, 900);
  agg.add(batch('GET /a', a1, 0.5, 'http', 'w1'));
  agg.add(batch('GET /a', a2, 0.6, 'http', 'w2'));
  agg.add(batch('GET /b', b, 1.5, 'http', 'w1'));
  agg.add(batch('checkout', [5000, 6000], 1.5, 'custom'));
  agg.add({ ...batch('GET /a', [1], 0.5), epoch: 0 }); // an older test's batch
  const result = agg.result(2000);
  const a = result.metrics.find((m) => m.name === 'GET /a')!;
  const all = [...a1, ...a2];
  t.equal(a.count, 500);
  for (const p of [50, 90, 95, 99] as const) t.ok(near(a[`p${p}`], exactPercentile(all, p)), `GET /a p${p} ${a[`p${p}`]} = ${exactPercentile(all, p)} within 0.1%`);
  t.equal(a.mean, Math.round((all.reduce((x, y) => x + y, 0) / all.length) * 1000) / 1000, 'the exact mean');
  const requests = [...all, ...b];
  t.equal(result.total.count, 600, 'the total counts requests, not the custom metric');
  t.ok(near(result.total.p99, exactPercentile(requests, 99)), `total p99 ${result.total.p99} = ${exactPercentile(requests, 99)}`);
  t.ok(near(result.total.max, 900), 'max');
  t.equal(result.total.mean, Math.round((requests.reduce((x, y) => x + y, 0) / requests.length) * 1000) / 1000);
  t.equal(result.metrics.find((m) => m.name === 'checkout')?.mean, 5500, "a custom metric's mean");
  t.same(result.series.map((s) => [s.t, s.rps]), [[0, 500], [1, 100]], 'requests per second, by second');
});

t.test('a batch that arrives late for a second already shown changes that second', async (t) => {
  const agg = new ResultAggregator(1, 0, 'users');
  agg.add(batch('GET /a', spread(100, 10, 20), 0.5));
  agg.add(batch('GET /a', spread(100, 10, 20), 1.5));
  const before = agg.result(2000).series;
  t.ok(near(before[0]!.p99, exactPercentile(spread(100, 10, 20), 99)), `second 0: p99 ${before[0]!.p99}`);
  agg.add(batch('GET /a', spread(100, 200, 300), 0.9, 'http', 'w2')); // the second worker's batch of second 0, later
  agg.add(batch('GET /a', spread(10, 10, 20), 2.5));
  const after = agg.result(3000).series;
  t.equal(after[0]!.rps, 200);
  t.ok(near(after[0]!.p99, exactPercentile([...spread(100, 10, 20), ...spread(100, 200, 300)], 99)), `second 0 now: p99 ${after[0]!.p99}`);
  t.same(after[1], before[1], 'second 1 is unchanged');
  t.equal(after[2]!.rps, 10, 'and a new second');
});
