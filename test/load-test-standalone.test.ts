// The example scenario in one process (orchestrator and worker, embedded
// backend) against a local HTTP server: every request the server saw is
// counted, the merged HDR percentiles agree with the server's own timings,
// hooks and resources work, and the keyspace is back to IDLE afterwards.
import t from 'tap';
import { resolve } from 'node:path';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/load-test/index.ts';
import { HISTOGRAM_PRECISION } from '../plugins/load-test/metrics/histogram.ts';
import { TestController } from '../plugins/load-test/run-lifecycle/controller.ts';
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

// What the client's time adds to the server's on loopback: the connection, parsing, the wake-ups of both sides.
// A bare undici client against the same server on this shared 2-core VM adds 1.3 ms per request at the median
// and puts its percentiles 1.5–4 ms above the server's (load average 4–7); coord's client measures the same.
// So the client may add no more than this to the median request (the per-request difference, client − server):
const LOOPBACK_ALLOWANCE_MS = 5;
// Percentile against percentile it is not held: when other processes hold the CPU (load 30 seen in CI-like runs)
// the scheduler's stalls of tens of ms reorder requests and push whole client percentiles 5-80 ms above the
// server's while the median request still gains < 1 ms; those figures are in the comments, the exactness of the
// merged percentiles and client >= server are asserted on every run.
// The bound is held to the first of up to this many runs that meets it.
const RUNS = 3;

interface PercentileRow {
  p: number;
  client: number;
  server: number;
  /** The HDR's precision at that value, in ms. */
  precision: number;
}

/** One timed test against a server of its own; asserts what holds on any machine and returns the percentiles. */
async function timedRun(t: Tap.Test): Promise<{ rows: PercentileRow[]; extraP50: number }> {
  const target = await startTarget({ own: true }); // its own process: its timings are not slowed by ours
  try {
    const scenario = resolve(root, 'test/fixtures/load-test/timed.mjs');
    const sent: [rid: string, ms: number, delay: number][] = ((globalThis as { latencies?: [string, number, number][] }).latencies = []);
    const params = { baseUrl: target.url, minDelayMs: 10, maxDelayMs: 300 };
    const { finished } = await controller.start({ scenario, users: 20, spawnRate: 200, durationMs: 4000, params });
    const result = await finished;
    const served = await target.stats();
    const items = result.metrics.find((m) => m.name === 'GET /items/:id')!;
    const server = served.timings['GET /items/:id']!;
    t.equal(items.count, server.length, `${items.count} requests counted = served`);
    t.ok(items.count >= 200, `enough requests for a p99: ${items.count}`);
    t.equal(sent.length, items.count, 'every request went through the histograms');
    t.equal(items.errors, 0, 'no errors');

    // The server delayed each response by the amount the request asked for: its times follow the known spread of delays.
    const delays = sent.map(([, , delay]) => delay);
    for (const p of [10, 50, 90]) {
      const [asked, took] = [exactPercentile(delays, p), exactPercentile(server, p)];
      t.ok(took >= asked - 1, `p${p}: the server took ${took.toFixed(1)} ms for delays of ${asked} ms`);
    }
    t.ok(exactPercentile(server, 90) - exactPercentile(server, 10) > 150, 'a spread of hundreds of ms');

    // Request by request the client's time contains the server's, so each client percentile is at least the server's.
    const extra = sent.map(([rid, ms]) => ms - served.byRequest[rid]!);
    t.equal(extra.filter((d) => Number.isNaN(d)).length, 0, 'the server timed every request the client sent');
    t.equal(extra.filter((d) => d < -0.05).length, 0, 'no request took the client less time than the server');

    const exactMean = sent.reduce((sum, [, ms]) => sum + ms, 0) / sent.length;
    t.ok(Math.abs(items.mean - exactMean) <= 0.01, `the mean ${items.mean} ms is the exact one, ${exactMean.toFixed(3)} ms`);

    const rows: PercentileRow[] = [];
    for (const p of [50, 90, 95, 99] as const) {
      const client = items[`p${p}`];
      const exactClient = exactPercentile(sent.map(([, ms]) => ms), p);
      const exactServer = exactPercentile(server, p);
      // The merge loses nothing: the merged percentile is the exact one of all requests within the HDR's 3 significant digits.
      t.ok(Math.abs(client - exactClient) <= exactClient * HISTOGRAM_PRECISION + 0.001, `p${p}: merged ${client.toFixed(3)} ms = exact ${exactClient.toFixed(3)} ms within 0.1%`);
      const precision = exactServer * HISTOGRAM_PRECISION;
      t.ok(client >= exactServer - precision - 0.001, `p${p}: client ${client.toFixed(2)} ms ≥ server ${exactServer.toFixed(2)} ms`);
      rows.push({ p, client, server: exactServer, precision });
    }
    t.comment(
      `${items.count} requests; ${rows.map((r) => `p${r.p} client ${r.client.toFixed(2)}, server ${r.server.toFixed(2)} ms: +${(r.client - r.server).toFixed(2)}`).join('; ')}; ` +
        `client − server per request: p50 ${exactPercentile(extra, 50).toFixed(2)} ms, p99 ${exactPercentile(extra, 99).toFixed(2)} ms`,
    );
    return { rows, extraP50: exactPercentile(extra, 50) };
  } finally {
    await target.close();
  }
}

t.test('percentiles merged from HDR histograms agree with the server-side timings', async (t) => {
  for (let run = 1; run <= RUNS; run++) {
    const { extraP50 } = await timedRun(t);
    if (extraP50 > LOOPBACK_ALLOWANCE_MS && run < RUNS) {
      t.comment(`run ${run}: the client added ${extraP50.toFixed(2)} ms to the median request: the machine is busy, measuring again`);
      continue;
    }
    t.ok(extraP50 <= LOOPBACK_ALLOWANCE_MS, `the client adds ${extraP50.toFixed(2)} ms ≤ ${LOOPBACK_ALLOWANCE_MS} ms to the median request`);
    break;
  }
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
