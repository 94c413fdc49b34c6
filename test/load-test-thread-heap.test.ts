// A users' thread runs under a heap limit (load-test.threadHeapMb, 1024 MB by
// default): below V8's 2 GB mark its heap grows to about twice what is live
// before a collection rather than four times, which keeps a long test's memory
// flat (bench/load-memory.mjs measures it). What the limit must not do is lose
// a test silently: a thread that runs out of memory ends with an error naming
// the setting, and its requests no batch holds are named as missing (exit 98).
import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startTarget } from './support/load.ts';

buildIfStale();
const target = await startTarget();
t.teardown(() => target.close());
const scenario = join(root, 'test/fixtures/load-test/heap.mjs');

function loadRun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(root, 'dist/bundle/coord.js'), 'load', 'run', '--scenario', scenario, '--param', `baseUrl=${target.url}`, ...args], { cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

interface Result {
  metrics: { name: string; count: number; max: number }[];
}

const heapLimitMb = async (args: string[]): Promise<number> => {
  const run = await loadRun(['--users', '1', '--duration', '1s', '--out', 'json', ...args]);
  if (run.code !== 0) throw new Error(`coord load run exited ${run.code}: ${run.stderr}`);
  const metric = (JSON.parse(run.stdout) as Result).metrics.find((m) => m.name === 'heap limit MB');
  if (!metric) throw new Error(`no 'heap limit MB' metric in ${run.stdout}`);
  return metric.max;
};

t.test("the users' thread's heap limit: 1024 MB by default, as set, or V8's own with 0", async (t) => {
  const byDefault = await heapLimitMb([]);
  // heap_size_limit is the old generation's limit plus the young generation's
  t.ok(byDefault >= 1024 && byDefault < 1200, `by default ${byDefault.toFixed(0)} MB: 1024 MB of old generation`);
  const set = await heapLimitMb(['--set', 'load-test.threadHeapMb=512']);
  t.ok(set >= 512 && set < 700, `--set load-test.threadHeapMb=512: ${set.toFixed(0)} MB`);
  const own = await heapLimitMb(['--set', 'load-test.threadHeapMb=0']);
  t.not(Math.round(own), Math.round(byDefault), `0: V8's own limit (${own.toFixed(0)} MB here)`);
});

t.test('a thread out of memory: an error naming the setting, the missing requests named, exit 98', async (t) => {
  const before = (await target.stats()).counts['GET /ping'] ?? 0;
  const run = await loadRun(['--users', '2', '--duration', '4s', '--param', 'kind=hog', '--set', 'load-test.threadHeapMb=64']);
  t.equal(run.code, 98, `exit 98 (incomplete results); stderr: ${run.stderr.slice(-600)}`);
  t.match(run.stderr, /the users' thread ran out of memory: its users stopped\. Its heap limit is load-test\.threadHeapMb \(64 MB\)/);
  t.match(run.stderr, /INCOMPLETE results: \d+ requests? unaccounted for/);
  t.notMatch(run.stderr, /^\s+at /m, 'no stack trace');
  const served = ((await target.stats()).counts['GET /ping'] ?? 0) - before;
  const reported = Number(/^total\s+(\d+)/m.exec(run.stdout)?.[1] ?? 0);
  const missing = Number(/INCOMPLETE results: (\d+) request/.exec(run.stderr)?.[1] ?? 0);
  t.ok(missing > 0, `${missing} named as missing`);
  // a request the target answered whose response the dying thread never recorded is in neither count
  t.ok(reported + missing <= served && reported + missing >= served - 2, `reported ${reported} + missing ${missing} ≈ served ${served}`);
});

t.test('a heap limit too small to start a thread is refused at the start, naming the setting', async (t) => {
  const run = await loadRun(['--users', '1', '--duration', '1s', '--set', 'load-test.threadHeapMb=10']);
  t.equal(run.code, 2);
  t.match(run.stderr, /load-test\.threadHeapMb \(10\) must be 0 \(V8's own limit\) or at least 64/);
});
