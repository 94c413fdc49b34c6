// The example scenario in one process (orchestrator and worker, embedded
// backend) against a local HTTP server: every request the server saw is
// counted, the merged HDR percentiles agree with the server's own timings,
// hooks and resources work, and the keyspace is back to IDLE afterwards.
import t from 'tap';
import { resolve } from 'node:path';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/load-test/index.ts';
import { HISTOGRAM_PRECISION } from '../plugins/load-test/histogram.ts';
import { TestController } from '../plugins/load-test/test-control.ts';
import { exactPercentile, startLoad, startTarget } from './support/load.ts';
import { root } from './support/cli.ts';

const example = resolve(root, 'examples/load-test/scenario.ts');
const load = await startLoad({ options: { metricsInterval: 0.5 } });
t.teardown(() => load.handle.stop('test over'));
const controller = load.controller!;
const { backend } = load.handle;

t.test('the example scenario, 20 users for 3 s: requests counted = requests served, hooks and resources work', async (t) => {
  const target = await startTarget();
  t.teardown(() => target.close());
  const { finished } = await controller.start({ scenario: example, users: 20, spawnRate: 40, durationMs: 3000, params: { baseUrl: target.url, maxDelayMs: 40 } });
  const result = await finished;
  const served = await target.stats();

  const requests = Object.fromEntries(result.metrics.filter((m) => m.kind === 'http').map((m) => [m.name, m.count]));
  t.same(requests, served.counts, 'per metric, the requests counted are the requests the server saw');
  t.equal(result.total.count, served.total, `total ${result.total.count} = ${served.total} served`);
  t.ok(result.total.count > 200, `a real load: ${result.total.count} requests`);
  t.equal(result.total.errors, 0, 'no errors');
  t.equal(requests['POST /login'], 20, 'onStart ran once per user');
  t.equal(requests['POST /logout'], 20, 'onStop ran once per user');
  t.equal(result.peakUsers, 20);
  const custom = result.metrics.find((m) => m.name === 'checkout flow');
  t.equal(custom?.kind, 'custom', 'a custom metric is reported, apart from the requests');
  t.equal(custom?.count, requests['POST /checkout'], 'one custom measurement per checkout');
  t.ok(result.series.length >= 3, 'a per-second series for the charts');
  t.same(served.held, [], 'every account was given back');
  t.same(served.doubleHolds, []);

  t.equal(await backend.send(['GET', 'test:state']), 'IDLE', 'the test is IDLE again');
  t.equal(await backend.send(['SCARD', 'users']), 0, 'runtime state is cleared');
  t.equal(await backend.send(['EXISTS', 'resource:accounts:available']), 0);
});

t.test('percentiles merged from HDR histograms agree with the server-side timings', async (t) => {
  const target = await startTarget({ own: true }); // its own process: its timings are not slowed by ours
  t.teardown(() => target.close());
  const scenario = resolve(root, 'test/fixtures/load-test/timed.mjs');
  const pairs: [string, number][] = ((globalThis as { latencies?: [string, number][] }).latencies = []);
  const { finished } = await controller.start({ scenario, users: 10, spawnRate: 100, durationMs: 3000, params: { baseUrl: target.url } });
  const result = await finished;
  const served = await target.stats();
  const items = result.metrics.find((m) => m.name === 'GET /items/:id')!;
  const raw = pairs.map(([, ms]) => ms);
  t.equal(items.count, served.timings['GET /items/:id']!.length, `${items.count} requests counted = served`);
  t.equal(raw.length, items.count, 'every request went through the histograms');

  // The merge loses nothing: each merged percentile is the exact one within the HDR's 3 significant digits.
  const lines: string[] = [];
  for (const p of [50, 90, 95, 99] as const) {
    const merged = items[`p${p}`];
    const exact = exactPercentile(raw, p);
    const server = exactPercentile(served.timings['GET /items/:id']!, p);
    lines.push(`p${p} merged ${merged.toFixed(2)}, exact ${exact.toFixed(2)}, server ${server.toFixed(2)} ms`);
    t.ok(Math.abs(merged - exact) <= exact * HISTOGRAM_PRECISION + 0.001, `p${p}: merged ${merged.toFixed(3)} ms = exact ${exact.toFixed(3)} ms within 0.1%`);
  }
  // Request by request, the client's time contains the server's; what it adds (loopback, parsing, scheduling on
  // this shared machine) is reported, not bounded: it is the machine's, not the histograms'.
  const extra = pairs.map(([rid, ms]) => ms - served.byRequest[rid]!);
  t.equal(extra.filter((d) => Number.isNaN(d)).length, 0, 'the server timed every request the client sent');
  t.equal(extra.filter((d) => d < -0.05).length, 0, 'no request took the client less time than the server');
  lines.push(`client − server per request: p50 ${exactPercentile(extra, 50).toFixed(2)} ms, p99 ${exactPercentile(extra, 99).toFixed(2)} ms`);
  t.comment(lines.join('; '));
});

t.test('a second test runs in a new epoch; a start while one runs is refused', async (t) => {
  const target = await startTarget();
  t.teardown(() => target.close());
  const epoch0 = Number(await backend.send(['GET', 'test:epoch']));
  const { epoch, finished } = await controller.start({ scenario: example, users: 2, spawnRate: 10, durationMs: 1000, params: { baseUrl: target.url } });
  t.equal(epoch, epoch0 + 1);
  await t.rejects(controller.start({ scenario: example, users: 1, spawnRate: 1 }), { name: 'ConflictError', message: /already running/ });
  const result = await finished;
  t.equal(result.epoch, epoch);
  t.equal(result.total.count, (await target.stats()).total, "only this test's requests are counted");
});

t.test('a test whose orchestrator is gone is reset by the next one; a live one is left alone', async (t) => {
  const target = await startTarget();
  t.teardown(() => target.close());
  const { finished } = await controller.start({ scenario: example, users: 2, spawnRate: 10, params: { baseUrl: target.url } });
  const other = new TestController(scenarioContext({ plugin, backend, keyPrefix: '', signal: new AbortController().signal }) as never);
  await t.rejects(other.start({ scenario: example, users: 1, spawnRate: 1 }), { name: 'ConflictError' }, 'the lease is alive: no takeover');
  t.equal(await backend.send(['GET', 'test:state']), 'RUNNING');
  await controller.stop('done');
  await finished;

  // What an orchestrator killed mid-test leaves: a RUNNING state, users, no lease (it expired).
  await backend.send(['SET', 'test:state', 'RUNNING']);
  await backend.send(['SADD', 'users', '1']);
  await backend.send(['HSET', 'user:1', 'worker', 'gone', 'status', 'running', 'updated_at', '1']);
  const taken = await other.start({ scenario: example, users: 1, spawnRate: 10, durationMs: 500, params: { baseUrl: target.url } });
  t.pass('the next orchestrator reset the abandoned test and started its own');
  t.equal((await backend.send(['HGET', 'user:1', 'worker'])) === 'gone', false, "the dead test's user is gone");
  const result = await taken.finished;
  t.equal(result.epoch, taken.epoch);
  t.ok(result.total.count > 0, 'and its own test ran');
  await other.close('test over');
  t.equal(await backend.send(['GET', 'test:state']), 'IDLE');
  t.equal(await backend.send(['EXISTS', 'orchestrator']), 0, 'the lease is given up at the end');
});
