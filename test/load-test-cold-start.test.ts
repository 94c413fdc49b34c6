// A test's clock starts when its workers run their users: a cold worker
// (`coord run --plugin load-test --role worker --workers auto`: one worker per
// core, each with its users in a thread that has not loaded the TypeScript
// scenario yet) on --redis runs users for ≥ 95% of a 6 s test, as the target
// measures it, and the summary's duration is that span. `coord load run
// --redis` with no worker registered fails at once, in one line.
import t from 'tap';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { coord, root } from './support/cli.ts';
import { startTarget } from './support/load.ts';
import { startRedis } from './support/redis.ts';

buildIfStale();
const target = await startTarget();
const redis = await startRedis();
t.teardown(async () => {
  await target.close();
  await redis.stop();
});

/** `coord load run …` to its end, async: the target server in this process keeps answering. */
function loadRun(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist/bundle/coord.js'), 'load', 'run', ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

t.test('load run --redis with no worker registered fails at once, in one line', async (t) => {
  const r = await loadRun(['--scenario', 'test/fixtures/load-test/paced.mjs', '--duration', '2s', '--redis', redis.url, '--log-level', 'info'], { COORD_LOG_FORMAT: 'json' });
  t.equal(r.status, 1, `exit 1 (stderr: ${r.stderr})`);
  const lines = r.stderr.trim().split('\n');
  const logs = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; role?: string; time: string });
  t.same(lines.filter((l) => !l.startsWith('{')), [lines.at(-1)], 'one line besides the log');
  t.match(lines.at(-1), /^coord: no worker registered at redis:\/\/127\.0\.0\.1:\d+: start some with coord run --plugin load-test --role worker/);
  // Timed from the orchestrator's start (this machine is shared: starting the process itself may take seconds).
  const at = (msg: string) => Date.parse(logs.find((l) => l.role === 'orchestrator' && l.msg === msg)!.time);
  const tookMs = at('role stopped') - at('role started');
  t.ok(tookMs < 3000, `failed ${tookMs} ms after the orchestrator started (it used to wait 10 s for a worker)`);
});

t.test('a cold worker on --redis with a .ts scenario runs users for ≥ 95% of a 6 s test', async (t) => {
  const worker = coord(['run', '--plugin', 'load-test', '--role', 'worker', '--workers', 'auto', '--redis', redis.url]);
  t.teardown(() => worker.kill('SIGKILL'));
  const cores = availableParallelism();
  for (let i = 1; i <= cores; i++) await worker.waitFor((l) => l.msg === 'worker registered' && String(l.workerId).endsWith(`-${i}`));
  const mark = (await target.stats()).now;
  const r = await loadRun(['--redis', redis.url, '--scenario', 'examples/load-test/scenario.ts', '--users', '4', '--duration', '6s',
    '--param', `baseUrl=${target.url}`, '--out', 'json']);
  t.equal(r.status, 0, `exit 0 (stderr: ${r.stderr.slice(-400)})`);
  const result = JSON.parse(r.stdout);
  const served = await target.stats(mark);
  t.equal(result.total.count, served.arrivedSince, 'requests counted = requests served');
  t.ok(served.spanSince >= 0.95 * 6000, `users sent requests for ${(served.spanSince / 1000).toFixed(2)} s of the 6 s test (first to last, at the target)`);
  t.ok(result.durationS >= 6 && result.durationS < 7, `the summary says it ran ${result.durationS} s`);
  const workers = new Set(worker.lines.filter((l) => l.msg === 'test started').map((l) => l.workerId));
  t.equal(workers.size, cores, `each of the ${cores} workers of the one command ran users`);
});
