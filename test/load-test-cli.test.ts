// `coord load …` as users type it, with the built CLI on Node (and `coord
// load run` on Deno): a whole test in one command with live progress, a
// summary, thresholds that set the exit code, JSON/CSV/HTML output; one clear
// line for each kind of bad input; start/users/status/stop against a running
// orchestrator whose API wants a token.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { coord, root } from './support/cli.ts';
import { startTarget } from './support/load.ts';
import { freePort } from './support/redis.ts';

buildIfStale();
const target = await startTarget();
const dir = mkdtempSync(join(tmpdir(), 'coord-load-cli-'));
t.teardown(async () => {
  await target.close();
  rmSync(dir, { recursive: true, force: true });
});
const example = 'examples/load-test/scenario.ts';
const fixture = (name: string) => `test/fixtures/load-test/${name}`;

/** Runs a command to its end (async, so the target server in this process keeps answering). */
function run(bin: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}
const node = (args: string[]) => run(process.execPath, [join(root, 'dist/bundle/coord.js'), ...args]);
const deno = (args: string[]) => run(join(root, 'node_modules/.bin/deno'), ['run', '-A', join(root, 'cli/main.ts'), ...args]);

t.test('load run on Node: a TypeScript scenario, live progress, JSON results, thresholds met', async (t) => {
  const before = (await target.stats()).total;
  const r = await node(['load', 'run', '--scenario', example, '--users', '6', '--spawn-rate', '12', '--duration', '2s',
    '--param', `baseUrl=${target.url}`, '--threshold', 'p95<2s', '--threshold', 'errors<1%', '--out', 'json']);
  t.equal(r.status, 0, `exit 0 (stderr: ${r.stderr.slice(-300)})`);
  const result = JSON.parse(r.stdout);
  t.equal(result.total.count, (await target.stats()).total - before, 'requests counted = requests served');
  t.equal(result.peakUsers, 6);
  t.same(result.thresholds.map((o: { ok: boolean }) => o.ok), [true, true]);
  t.match(r.stderr, /\[\s+\d+s\] users \d+\/6 {2}rps \d+ {2}p95 [\d.]+ms {2}errors 0/, 'progress lines on stderr: users, rps, p95, errors');
});

t.test('a threshold that fails exits 99; the table says which; CSV and an HTML report', async (t) => {
  const report = join(dir, 'report.html');
  const r = await node(['load', 'run', '--scenario', fixture('paced.mjs'), '--users', '2', '--duration', '1s', '--param', `baseUrl=${target.url}`,
    '--threshold', 'p50<0.001ms', '--threshold', 'GET /ping:errors<=0%', '--report', report]);
  t.equal(r.status, 99, 'exit 99');
  t.match(r.stdout, /metric\s+requests\s+errors\s+aborted\s+req\/s\s+mean\s+p50\s+p90\s+p95\s+p99\s+max/, 'the summary table');
  t.match(r.stdout, /FAIL\s+p50<0\.001ms/);
  t.match(r.stdout, /ok\s+GET \/ping:errors<=0%/);
  t.ok(existsSync(report), 'the HTML report is written');
  const html = readFileSync(report, 'utf8');
  t.match(html, /CoordCharts\.draw/, 'with charts');
  t.match(html, /GET \/ping/);

  const csv = await node(['load', 'run', '--scenario', fixture('paced.mjs'), '--users', '1', '--duration', '1s', '--param', `baseUrl=${target.url}`, '--out', 'csv']);
  t.equal(csv.status, 0);
  const lines = csv.stdout.trim().split('\n');
  t.equal(lines[0], 'metric,requests,errors,aborted,rps,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,min_ms,current_rps');
  t.match(lines[1], /^GET \/ping,\d+,0,0,/);
  t.match(lines.at(-1), /^total,\d+,0,0,/);
});

t.test('load run on Deno runs the same TypeScript scenario', async (t) => {
  const r = await deno(['load', 'run', '--scenario', example, '--users', '3', '--duration', '1s', '--param', `baseUrl=${target.url}`, '--out', 'json']);
  t.equal(r.status, 0, `exit 0 (stderr: ${r.stderr.slice(-300)})`);
  t.ok(JSON.parse(r.stdout).total.count > 10);
});

t.test('bad input: one clear line each, exit 2, nothing started', async (t) => {
  writeFileSync(join(dir, 'syntax.mjs'), 'export default {{\n');
  writeFileSync(join(dir, 'type.ts'), 'const x: number = ;\nexport default {};\n');
  writeFileSync(join(dir, 'nosteps.mjs'), 'export default { params: {} };\n');
  writeFileSync(join(dir, 'throws.mjs'), 'throw new Error("boom at load");\n');
  const ok = ['--scenario', fixture('paced.mjs')];
  const cases: [string[], RegExp][] = [
    [['--scenario', 'missing.ts'], /^coord: cannot load scenario missing\.ts: no such file$/],
    [['--scenario', join(dir, 'syntax.mjs')], /^coord: cannot load scenario .*syntax\.mjs: SyntaxError: Unexpected token/],
    [['--scenario', join(dir, 'type.ts')], /^coord: cannot load scenario .*type\.ts: SyntaxError: .*type\.ts:1:19: Unexpected token$/],
    [['--scenario', join(dir, 'nosteps.mjs')], /^coord: scenario .*nosteps\.mjs: steps is missing or empty/],
    [['--scenario', join(dir, 'throws.mjs')], /^coord: cannot load scenario .*throws\.mjs: boom at load$/],
    [[], /^coord: load run needs --scenario FILE/],
    [[...ok, '--duration', '10x'], /^coord: --duration "10x" is not a duration: expected e\.g\. 30s/],
    [[...ok, '--duration', '0s'], /^coord: --duration "0s" must be more than zero$/],
    [[...ok, '--spawn-rate', 'fast'], /^coord: --spawn-rate "fast" is not a rate: expected e\.g\. 20, 20\/s or 600\/m$/],
    [[...ok, '--rate', '10/week'], /^coord: --rate "10\/week" is not a rate/],
    [[...ok, '--users', 'many'], /^coord: --users "many" is not a whole number ≥ 1$/],
    [[...ok, '--threshold', 'p95 < soon'], /^coord: --threshold "p95 < soon" does not parse: expected STAT OP VALUE/],
    [[...ok, '--threshold', 'p95<200'], /^coord: --threshold "p95<200" has no unit: expected ms or s/],
    [[...ok, '--threshold', 'errors<5ms'], /^coord: --threshold "errors<5ms" gives errors in ms or s/],
    [[...ok, '--out', 'xml'], /^coord: --out "xml" is not a format: expected table, json or csv$/],
    [[...ok, '--param', 'novalue'], /^coord: --param "novalue" is not key=value/],
  ];
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const results = await Promise.all(batch.map(([args]) => node(['load', 'run', ...args])));
    batch.forEach(([args, line], j) => {
      const r = results[j]!;
      t.equal(r.status, 2, `exit 2 for ${args.join(' ') || '(no flags)'}`);
      t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
      t.match(r.stderr.trim(), line);
    });
  }
});

t.test('start, users, status and stop drive a running orchestrator; its API wants the token', async (t) => {
  const port = await freePort();
  const orchestrator = coord(['run', '--plugin', 'load-test', '--set', `load-test.port=${port}`, '--set', 'load-test.metricsInterval=0.5'], { LOAD_TEST_TOKEN: 's3cret' });
  t.teardown(() => orchestrator.kill('SIGKILL'));
  await orchestrator.waitFor((l) => l.msg === 'load test API and page');
  const apiFlags = ['--api', `http://127.0.0.1:${port}`];
  const cli = (args: string[], token = 's3cret') => run(process.execPath, [join(root, 'dist/bundle/coord.js'), 'load', ...args, ...apiFlags], { LOAD_TEST_TOKEN: token });

  const denied = await cli(['status'], 'wrong');
  t.equal(denied.status, 1);
  t.match(denied.stderr.trim(), /^coord: orchestrator at http:\/\/127\.0\.0\.1:\d+: missing or wrong token/);

  const started = await cli(['start', '--scenario', join(root, fixture('paced.mjs')), '--users', '4', '--spawn-rate', '100', '--param', `baseUrl=${target.url}`]);
  t.equal(started.status, 0, started.stderr);
  t.match(started.stdout, /^test started: epoch 1/);
  const again = await cli(['start', '--scenario', join(root, fixture('paced.mjs'))]);
  t.match(again.stderr.trim(), /^coord: orchestrator at .*: a test is already running: stop it first$/);

  t.equal((await cli(['users', '7'])).stdout.trim(), 'target users: 7');
  const bad = await cli(['users', 'lots']);
  t.equal(bad.status, 2);
  t.match(bad.stderr.trim(), /^coord: users "lots" is not a whole number$/);
  await new Promise((r) => setTimeout(r, 1500));
  const status = await cli(['status', '--json']);
  const s = JSON.parse(status.stdout);
  t.equal(s.state, 'RUNNING');
  t.equal(s.users, 7);
  t.equal(s.workers.length, 1, 'the standalone worker');
  t.match((await cli(['status'])).stdout, /^state RUNNING, epoch 1, users 7\/7, 1 workers/);

  const stopped = await cli(['stop']);
  t.equal(stopped.status, 0);
  t.match(stopped.stdout, /GET \/ping/);
  t.match((await cli(['status'])).stdout, /^state IDLE/);
  const nobody = await freePort();
  const unreachable = await run(process.execPath, [join(root, 'dist/bundle/coord.js'), 'load', 'status', '--api', `http://127.0.0.1:${nobody}`]);
  t.match(unreachable.stderr.trim(), /^coord: cannot reach the load-test orchestrator at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): start one with coord run --plugin load-test/);
});
