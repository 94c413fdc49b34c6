// `coord load run` uses every core and can always be stopped: its workers
// (--workers auto: one per core) run their users in worker threads. A
// CPU-bound scenario keeps both of this machine's cores wanted, with the
// requests it counts equal to those the target served; Ctrl-C ends a run
// whose steps block their thread for 5 s within a second, with what ran
// reported; a 3 s test whose steps block for 6 s ends at its duration, the
// requests its terminated threads never wrote named as missing, also when users
// are added while steps hold their threads. The bounds
// keep a second for a loaded machine and are still far from the steps' end.
// The target HTTP server runs in this process (it records arrival times).
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startTarget } from './support/load.ts';
import { until } from './support/until.ts';

buildIfStale();
const target = await startTarget();
t.teardown(() => target.close());
const scenario = join(root, 'test/fixtures/load-test/busy.mjs');

interface Run {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

function loadRun(args: string[]): Run {
  const child = spawn(process.execPath, [join(root, 'dist/bundle/coord.js'), 'load', 'run', '--scenario', scenario, '--param', `baseUrl=${target.url}`, ...args], { cwd: root });
  const run: Run = { child, stdout: '', stderr: '', exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : null)))) };
  child.stdout!.on('data', (c: Buffer) => (run.stdout += c));
  child.stderr!.on('data', (c: Buffer) => (run.stderr += c));
  return run;
}

/**
 * Per thread of a process (/proc/<pid>/task/<tid>/schedstat): ns on a CPU and
 * ns waiting for one. Their sum over a span is how long the thread wanted a
 * core: this machine is shared, so time on a CPU alone measures what other
 * tenants left, not what coord asks for.
 */
function threadTimes(pid: number): Map<string, { run: number; wait: number }> {
  const times = new Map<string, { run: number; wait: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      times.set(tid, { run: run!, wait: wait! });
    } catch {
      // the thread ended
    }
  }
  return times;
}

/** utime + stime of the process (all its threads), in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

t.test('a CPU-bound scenario keeps every core busy; requests counted = requests served', async (t) => {
  const cores = availableParallelism();
  const before = (await target.stats()).counts['GET /ping'] ?? 0;
  const run = loadRun(['--users', String(4 * cores), '--duration', '10s', '--param', 'busyMs=5', '--out', 'json']);
  await until('the users running', () => new RegExp(`users ${4 * cores}/${4 * cores}`).test(run.stderr), 120_000);
  const pid = run.child.pid!;
  const t0 = performance.now();
  const [times0, cpu0] = [threadTimes(pid), cpuSeconds(pid)];
  await new Promise((r) => setTimeout(r, 3000));
  const [times1, cpu1] = [threadTimes(pid), cpuSeconds(pid)];
  const wallNs = (performance.now() - t0) * 1e6;
  const wanted = [...times1].map(([tid, b]) => {
    const a = times0.get(tid) ?? { run: 0, wait: 0 };
    return (b.run - a.run + b.wait - a.wait) / wallNs;
  });
  const busyThreads = wanted.filter((w) => w >= 0.8).length;
  const total = wanted.reduce((a, b) => a + b, 0);
  t.ok(busyThreads >= cores, `${busyThreads} threads wanted a core ≥ 80% of the time (${wanted.map((w) => w.toFixed(2)).join(' ')}), one per core at least`);
  t.ok(total >= 0.8 * cores, `the process wanted ${total.toFixed(2)} cores of ${cores} (≥ ${(0.8 * cores).toFixed(1)})`);
  t.comment(`CPU time / wall over the same 3 s: ${((cpu1 - cpu0) / (wallNs / 1e9)).toFixed(2)} (what the machine's other load left; load average ${readFileSync('/proc/loadavg', 'utf8').trim()})`);
  t.equal(await run.exited, 0, `exit 0 (stderr: ${run.stderr.slice(-300)})`);
  const result = JSON.parse(run.stdout);
  t.ok(result.total.count > 0);
  t.equal(result.total.count, (await target.stats()).counts['GET /ping']! - before, 'requests counted = requests served');
});

t.test('Ctrl-C ends a run whose steps block for 5 s within a second, not at the end of the step; what ran is reported', async (t) => {
  const before = (await target.stats()).counts['GET /ping'] ?? 0;
  const run = loadRun(['--users', '4', '--duration', '60s', '--param', 'busyMs=5000', '--out', 'json']);
  await until('the users running', () => /users 4\/4/.test(run.stderr), 120_000);
  // Ctrl-C just after a round of requests: each user is then held for 5 s, which a stop that waited for the step would take
  await until('a second round of requests', async () => (await target.stats()).counts['GET /ping']! - before >= 8, 30_000, 5);
  const signalled = performance.now();
  run.child.kill('SIGINT');
  const code = await run.exited;
  const tookMs = performance.now() - signalled;
  t.equal(code, 130, `exit 130 (stderr: ${run.stderr.slice(-300)})`);
  t.ok(tookMs < 2000, `exited ${tookMs.toFixed(0)} ms after SIGINT (the docs' second, and one more for a loaded machine; the step ends at 5 s)`);
  const result = JSON.parse(run.stdout);
  const served = (await target.stats()).counts['GET /ping']! - before;
  // A thread held by a step is terminated: the one request each of its users sent since its last metric batch may be lost.
  t.ok(result.total.count >= served - 4 && result.total.count <= served, `requests reported (${result.total.count}) are those served (${served}), less at most one per user`);
});

/** A 3 s test whose steps block for 6 s, run with `args`: it must end at its duration and name what its held threads never wrote. */
async function heldThreadsTest(t: Test, args: string[]): Promise<void> {
  const marks = await target.stats();
  const before = marks.counts['GET /ping'] ?? 0;
  const run = loadRun([...args, '--duration', '3s', '--param', 'busyMs=6000', '--out', 'json']);
  // The test's clock starts when its users run: its first request. Each user is then held for 6 s, so a stop
  // that waited for the step would end 6 s after it; terminating the thread ends it at once (1.5 s for a loaded machine).
  await until('the first request', async () => ((await target.stats()).counts['GET /ping'] ?? 0) > before, 120_000, 5);
  const firstAt = performance.now();
  const code = await run.exited;
  const tookS = (performance.now() - firstAt) / 1000;
  t.ok(tookS < 4.5, `ended ${tookS.toFixed(2)} s after its first request (the step ends at 6 s)`);
  const result = JSON.parse(run.stdout);
  t.ok(result.durationS >= 2.9 && result.durationS < 4, `ran ${result.durationS} s`);
  // Each user's request was recorded, and the step held the thread before its batch could be written: the
  // thread's count (its last tick) says so, and the result names them rather than reporting none.
  const served = (await target.stats()).counts['GET /ping']! - before;
  t.equal(code, 98, `exit 98, incomplete (stderr: ${run.stderr.slice(-300)})`);
  t.equal(result.total.count + result.incomplete?.unaccounted, served, `reported ${result.total.count} + named missing ${result.incomplete?.unaccounted} = served ${served}`);
  t.match(run.stderr, /INCOMPLETE results: \d+ requests unaccounted for .*terminated/, 'stderr says why');
}

t.test('a 3 s test whose steps block for 6 s ends at its duration, not at the end of the step; what its thread never wrote is named', (t) =>
  heldThreadsTest(t, ['--users', '2']));

// Users started one a second: the later ones are added to threads the first ones' steps already hold. The
// worker waited for a held thread to take them (until the step ended), and read the stop only then (7.9 s).
t.test('the same with users added while steps hold their threads: the stop is not held up behind the adds', (t) =>
  heldThreadsTest(t, ['--users', '4', '--spawn-rate', '1']));
