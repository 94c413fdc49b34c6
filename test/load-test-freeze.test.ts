// A user's loop never holds the event loop: steps that do no network I/O (one
// that only records, one that throws, one that rejects, one that computes)
// run for 3 s and the test ends by itself with the failures counted; Ctrl-C
// (SIGINT) during each stops `coord load run` within 2 s with exit 130 (SIGTERM:
// 143; a second signal exits at once); and
// started through the orchestrator's API, /api/status keeps answering within
// 200 ms. Failed iterations fail errors<1% (exit 99) without any HTTP error.
// The target HTTP server runs in its own process.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { buildIfStale } from './support/build.ts';
import { coord, root } from './support/cli.ts';
import { api, startTarget } from './support/load.ts';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';

buildIfStale();
const target = await startTarget({ own: true });
t.teardown(() => target.close());
const scenario = join(root, 'test/fixtures/load-test/no-io.mjs');
const KINDS = ['record', 'sync-throw', 'async-throw', 'cpu'] as const;
const USERS = 3;

interface Run {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

/**
 * The status a shell reports: the exit code, or 128 + the signal's number when a signal ended the process (a second
 * SIGTERM that lands after the run removed its handlers, while it exits with 143 anyway, ends it the default way).
 */
function exitStatus(signal: NodeJS.Signals | null): number | null {
  return signal ? 128 + osConstants.signals[signal] : null;
}

function loadRun(args: string[]): Run {
  const child = spawn(process.execPath, [join(root, 'dist/bundle/coord.js'), 'load', 'run', '--scenario', scenario, '--users', String(USERS), ...args], { cwd: root });
  const run: Run = { child, stdout: '', stderr: '', exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? exitStatus(signal)))) };
  child.stdout!.on('data', (c: Buffer) => (run.stdout += c));
  child.stderr!.on('data', (c: Buffer) => (run.stderr += c));
  return run;
}

const metric = (result: { metrics: { name: string; count: number; errors: number }[] }, name: string) => result.metrics.find((m) => m.name === name);

// The four run at once (to save time; nothing here is timed closely), each in its own process.
t.test('each kind: a 3 s test ends by itself, its failures counted', async (t) => {
  const before = (await target.stats()).counts['GET /login'] ?? 0;
  const runs = KINDS.map((kind) => {
    const started = performance.now();
    const run = loadRun(['--duration', '3s', '--param', `baseUrl=${target.url}`, '--param', `kind=${kind}`, '--threshold', 'errors<1%', '--out', 'json']);
    return run.exited.then((code) => ({ kind, run, code, tookS: (performance.now() - started) / 1000 }));
  });
  for (const { kind, run, code, tookS } of await Promise.all(runs)) {
    const throws = kind.endsWith('throw');
    t.equal(code, throws ? 99 : 0, `${kind}: exit ${throws ? 99 : 0} (stderr: ${run.stderr.slice(-300)})`);
    t.ok(tookS < 90, `${kind}: ended by itself (${tookS.toFixed(1)} s, process start and stop included)`);
    const result = JSON.parse(run.stdout);
    t.ok(result.durationS >= 2.9 && result.durationS < 8, `${kind}: ran for ~3 s (${result.durationS} s)`);
    t.equal(metric(result, 'GET /login')?.count, USERS, `${kind}: each user logged in once on the target`);
    if (throws) {
      const failed = metric(result, 'step:no-io')!;
      t.ok(failed.count >= USERS, `${kind}: failed iterations counted (${failed.count})`);
      t.equal(failed.errors, failed.count);
      t.equal(result.total.count, USERS + failed.count, `${kind}: the total counts the requests and the failed iterations`);
      t.equal(result.total.errors, failed.count, `${kind}: its errors are the failed iterations (no HTTP error)`);
      t.same(result.thresholds.map((o: { ok: boolean }) => o.ok), [false], `${kind}: errors<1% fails`);
      t.match(result.errors, [{ metric: 'step:no-io', message: kind === 'sync-throw' ? 'sync failure' : 'async failure' }]);
      // The back-off after each failure (10 ms, doubling, at most 1 s) keeps it from spinning.
      t.ok(failed.count < USERS * 20, `${kind}: a user backs off after a failure (${failed.count} failures in 3 s)`);
    } else {
      const own = metric(result, kind === 'cpu' ? 'cpu' : 'recorded')!;
      t.ok(own.count > USERS, `${kind}: the step ran (${own.count} times)`);
      t.equal(result.total.errors, 0);
      t.same(result.thresholds.map((o: { ok: boolean }) => o.ok), [true]);
    }
  }
  t.equal((await target.stats()).counts['GET /login'] - before, USERS * KINDS.length, 'the target served the logins');
});

for (const kind of KINDS) {
  t.test(`${kind}: SIGINT stops coord load run within 2 s, exit 130, results printed`, async (t) => {
    const run = loadRun(['--duration', '60s', '--param', `baseUrl=${target.url}`, '--param', `kind=${kind}`]);
    await until('the users running', () => new RegExp(`users ${USERS}/${USERS}`).test(run.stderr), 60_000);
    await new Promise((r) => setTimeout(r, 500));
    const signalled = performance.now();
    run.child.kill('SIGINT');
    const code = await run.exited;
    const tookMs = performance.now() - signalled;
    t.equal(code, 130, `exit 130 (stderr: ${run.stderr.slice(-300)})`);
    t.ok(tookMs < 2000, `stopped ${tookMs.toFixed(0)} ms after SIGINT`);
    t.match(run.stderr, /SIGINT: stopping the test/);
    t.match(run.stdout, /^users test, epoch 1: /, 'the summary of what ran');
  });
}

t.test('SIGTERM too; a second signal exits at once (exit 143)', async (t) => {
  // Steps of 300 ms of CPU: the first signal is handled between them; the second does not wait for the stop.
  const run = loadRun(['--duration', '60s', '--param', `baseUrl=${target.url}`, '--param', 'kind=cpu', '--param', 'cpuMs=300']);
  await until('the users running', () => new RegExp(`users ${USERS}/${USERS}`).test(run.stderr), 60_000);
  run.child.kill('SIGTERM');
  await until('the first signal handled', () => /SIGTERM: stopping the test/.test(run.stderr), 5000);
  const signalled = performance.now();
  run.child.kill('SIGTERM');
  const code = await run.exited;
  t.equal(code, 143);
  t.ok(performance.now() - signalled < 2000, 'exited within 2 s of the second signal');
});

t.test('started through the API: /api/status answers within 200 ms while each kind runs', async (t) => {
  const port = await freePort();
  const orchestrator = coord(['run', '--plugin', 'load-test', '--set', `load-test.port=${port}`, '--set', `load-test.scenario=${scenario}`, '--set', 'load-test.metricsInterval=0.5']);
  t.teardown(() => orchestrator.kill('SIGKILL'));
  await orchestrator.waitFor((l) => l.msg === 'load test API and page');
  for (const kind of KINDS) {
    const started = await api(port, 'POST', '/api/start', { users: USERS, spawnRate: 100, duration: '3s', params: { baseUrl: target.url, kind } });
    t.equal(started.status, 202, `${kind}: started (${JSON.stringify(started.body)})`);
    await until('the users assigned', async () => (await api(port, 'GET', '/api/status')).body.users === USERS, 30_000);
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const sent = performance.now();
      const status = await api(port, 'GET', '/api/status');
      times.push(performance.now() - sent);
      t.equal(status.status, 200);
      await new Promise((r) => setTimeout(r, 100));
    }
    times.sort((a, b) => a - b);
    t.ok(times[3]! < 200, `${kind}: /api/status answered in ${times.map((ms) => ms.toFixed(0)).join(', ')} ms (median under 200)`);
    t.ok(times.at(-1)! < 1000, `${kind}: never stalled`);
    const ended = await until(
      `${kind}: the test's end`,
      async () => {
        const s = (await api(port, 'GET', '/api/status')).body;
        return s.state === 'IDLE' && s.result?.epoch === KINDS.indexOf(kind) + 1 ? s.result : undefined;
      },
      30_000,
    );
    if (kind.endsWith('throw')) t.ok(ended.total.errors > 0 && ended.total.errors === ended.total.count - USERS, `${kind}: failures counted (${ended.total.errors})`);
    else t.equal(ended.total.errors, 0);
  }
});

t.test('a base URL without a scheme, or words left after the options: one line, exit 2, nothing started', async (t) => {
  const before = (await target.stats()).total;
  const port = new URL(target.url).port;
  const cases: [string[], RegExp][] = [
    [['--param', `baseUrl=127.0.0.1:${port}`], /^coord: --param baseUrl "127\.0\.0\.1:\d+" is not a URL the load test can use: expected http:\/\/ or https:\/\/ and a host, e\.g\. http:\/\/127\.0\.0\.1:8080$/],
    [['--param', `baseUrl=${target.url}`, '--duration', '5', 'minutes'], /^coord: load run: unexpected "minutes": values with spaces need quotes, and durations are written 5m, 30s, 1m30s$/],
  ];
  const runs = cases.map(([args]) => loadRun(args));
  for (const [i, run] of runs.entries()) {
    t.equal(await run.exited, 2, `exit 2 for ${cases[i]![0].join(' ')}`);
    t.equal(run.stderr.trim().split('\n').length, 1, 'one line');
    t.match(run.stderr.trim(), cases[i]![1]);
  }
  t.equal((await target.stats()).total, before, 'no request was sent');
});
