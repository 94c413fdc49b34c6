// Arrival-rate (open model) mode, in one process: iterations start at the
// target rate whatever the server does. When the server keeps up, the rate is
// met and nothing is dropped; when it cannot, iterations that wait for a free
// user more than maxIterationDelay are dropped and counted, and the wait of
// the others shows in their latency (coordinated-omission correction) instead
// of silently lowering the rate as a closed model would.
import t from 'tap';
import { resolve } from 'node:path';
import { startLoad, startTarget } from './support/load.ts';
import { root } from './support/cli.ts';
import { summaryTable } from '../plugins/load-test/report/formats.ts';

const scenario = resolve(root, 'test/fixtures/load-test/slow.mjs');
const target = await startTarget({ own: true });
const load = await startLoad({ options: { metricsInterval: 0.5, maxIterationDelay: 0.5 } });
t.teardown(async () => {
  await load.handle.stop('test over');
  await target.close();
});
const controller = load.controller!;

t.test('a server that keeps up: the rate is met, nothing dropped', async (t) => {
  // 20 users for 20 iterations/s: an iteration may take up to a second before one waits.
  const { finished } = await controller.start({ scenario, users: 20, spawnRate: 1000, durationMs: 3000, rate: 20, params: { baseUrl: target.url, delayMs: 10 } });
  const result = await finished;
  t.equal(result.mode, 'arrival-rate');
  t.equal(result.droppedIterations, 0, 'no iteration dropped');
  const expected = 20 * 3;
  t.ok(Math.abs(result.total.count - expected) <= expected * 0.2, `${result.total.count} requests for 20/s over 3 s (expected about ${expected})`);
  t.ok(result.total.p50 < 300, `p50 ${result.total.p50} ms: no wait for a user`);
});

t.test('a server too slow for the rate: dropped iterations are counted, waits show in the latency', async (t) => {
  // 2 users × 1 request per 200 ms = 10/s of capacity for 40/s asked.
  const { finished } = await controller.start({ scenario, users: 2, spawnRate: 1000, durationMs: 3000, rate: 40, params: { baseUrl: target.url, delayMs: 200 } });
  const open = await finished;
  t.ok(open.droppedIterations > 40, `${open.droppedIterations} iterations dropped`);
  // the dropped count has a line of its own; no row of zeros that reads as "no iteration ran"
  t.same(open.metrics.filter((m) => m.count === 0 && m.errors === 0 && m.aborted === 0).map((m) => m.name), [], 'no metric of zeros in the result');
  const table = summaryTable(open);
  t.notMatch(table, /^iterations\s/m, 'the summary has no iterations row');
  t.match(table, `dropped iterations: ${open.droppedIterations}`, 'and names the dropped ones');
  t.ok(open.total.p50 >= 300, `p50 ${open.total.p50} ms includes the wait for a free user (server time 200 ms)`);

  // The same users in the closed model never show the wait: they just send less.
  const closed = await (await controller.start({ scenario, users: 2, spawnRate: 1000, durationMs: 2000, params: { baseUrl: target.url, delayMs: 200 } })).finished;
  t.ok(closed.total.p50 < 300, `closed model p50 ${closed.total.p50} ms hides the backlog`);
  t.comment(`open model: p50 ${open.total.p50} ms, p99 ${open.total.p99} ms, ${open.droppedIterations} dropped; closed model: p50 ${closed.total.p50} ms`);
});
