// Requests the test's own stop cuts off are no failures of the target: a
// `coord load run` Ctrl-C'd (a real SIGINT) while 100 users wait on 400 ms
// answers reports them as "aborted", apart from the requests, their errors and
// latencies, in the JSON, CSV and table outputs.
import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startTarget } from './support/load.ts';
import { until } from './support/until.ts';

buildIfStale();
const target = await startTarget({ own: true });
t.teardown(() => target.close());
const USERS = 100;
const DELAY_MS = 400;

/** Runs a test of slow requests, Ctrl-C's it once every user has sent a few, and returns its exit code and output. */
async function interruptedRun(out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = ['load', 'run', '--scenario', join(root, 'test/fixtures/load-test/slow.mjs'), '--users', String(USERS), '--duration', '60s',
    '--param', `baseUrl=${target.url}`, '--param', `delayMs=${DELAY_MS}`, '--out', out];
  const child = spawn(process.execPath, [join(root, 'dist/bundle/coord.js'), ...args], { cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await until('every user running and a few rounds done', () => /users 100\/100 .* requests ([3-9]\d\d|\d{4,})/.test(stderr), 60_000);
  child.kill('SIGINT');
  return { code: await exited, stdout, stderr };
}

t.test('Ctrl-C: the requests in flight are counted as aborted, not as errors (JSON)', async (t) => {
  const before = (await target.stats()).counts['GET /slow'] ?? 0;
  const run = await interruptedRun('json');
  t.equal(run.code, 130, `exit 130 (stderr: ${run.stderr.slice(-300)})`);
  const result = JSON.parse(run.stdout);
  const slow = result.metrics.find((m: { name: string }) => m.name === 'GET /slow');
  t.ok(result.total.aborted > 0 && result.total.aborted <= USERS, `aborted in flight: ${result.total.aborted} (at most one per user)`);
  t.equal(slow.aborted, result.total.aborted, 'per metric too');
  t.equal(result.total.errors, 0, 'no errors: the target failed nothing');
  t.same(result.errors, [], 'and no error kind "aborted"');
  t.ok(slow.count > 0, `completed requests: ${slow.count}`);
  t.ok(slow.p50 >= DELAY_MS * 0.95, `the latencies are the completed requests' (p50 ${slow.p50} ms; an aborted one would be shorter)`);
  const served = ((await target.stats()).counts['GET /slow'] ?? 0) - before;
  t.ok(served >= slow.count, `the target served every completed request (${served} served, ${slow.count} completed)`);
});

t.test('Ctrl-C: the CSV has an aborted column, the table an aborted line', async (t) => {
  const csv = await interruptedRun('csv');
  const lines = csv.stdout.trim().split('\n');
  t.equal(lines[0], 'metric,requests,errors,aborted,rps,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,min_ms,current_rps');
  const total = lines.at(-1)!.split(',');
  t.equal(total[0], 'total');
  t.equal(total[2], '0', 'no errors');
  t.ok(Number(total[3]) > 0, `aborted ${total[3]}`);
  const table = await interruptedRun('table');
  t.match(table.stdout, /^aborted: \d+ requests in flight when the test was stopped \(not errors, not in the latencies\)$/m);
  t.notMatch(table.stdout, /^errors:/m, 'no errors section');
});
