// Memory per 1,000 users, beside Locust's: each tool runs N users that send
// GET / and then wait 1 s (Locust: an HttpUser with wait_time constant(1);
// coord: a step that sends the request and sleeps 1 s), against the bench's
// server (its own process, bench/load-server.mjs), all users started within
// the first seconds. The tool's whole process tree's resident memory (RSS,
// from /proc: coord's worker threads are in its process, Locust is one
// process) is sampled every second; the steady phase is from when every user
// runs plus 5 s to the end. Reported: the steady phase's median and its
// first and last samples (flat or growing), and MB per 1,000 users
// (the steady median over N / 1,000).
// coord: `coord load run --workers auto` (its default; BENCH_WORKERS=1 for one
// thread of users). Locust: `locust
// --headless`, one process (Debian's python3-locust; its version string is
// empty, which only a master with workers minds).
//
//   npm run build && node bench/load-memory.mjs   (BENCH_USERS=5000,20000, BENCH_SECONDS=40 and
//   BENCH_TOOLS=coord,locust by default; BENCH_SET=load-test.threadHeapMb=0 passes
//   --set to coord, comma-separated)
//
// Writes bench/results/load-memory.md. bench/load.mjs prints the same table.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli, median, startCountingServer } from './load-process-runs.mjs';
import { exitWithHelpIfAsked } from './help.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const SCENARIO = `export default {
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'get', run: async (user) => { await user.http.get('/', { metric: 'GET /' }); await user.sleep(1000); } }],
};
`;
const LOCUSTFILE = `from locust import HttpUser, task, constant

class ThinkUser(HttpUser):
    wait_time = constant(1)

    @task
    def get(self):
        self.client.get("/")
`;

/** RSS in bytes of a process and all its descendants. */
function treeRss(pid) {
  let bytes = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    bytes = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) bytes += treeRss(Number(child));
    }
  } catch {
    // the process ended
  }
  return bytes;
}

/** Runs a tool, sampling its tree's RSS each second; resolves to the samples (MB, by second since spawn). */
async function sample(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  const samples = [];
  const timer = setInterval(() => samples.push(treeRss(child.pid) / 1048576), 1000);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  if (code !== 0 && code !== 99) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`);
  return samples.filter((mb) => mb > 0);
}

/** The steady phase: every user started (within 1,000 a second, and 5 s more) to the end. */
function steady(samples, users) {
  const from = Math.ceil(users / 1000) + 5;
  const phase = samples.slice(from, -1);
  return { median: median(phase), first: phase[0], last: phase.at(-1), max: Math.max(...samples) };
}

/**
 * Each tool of `tools` ('coord', 'locust') with each number of `users` for `seconds`, against `server`: the table and
 * how it was run (markdown). `workers`: coord's --workers.
 */
export async function memoryReport(server, { users = [5000, 20000], seconds = 40, workers = 'auto', tools = ['coord', 'locust'], set = [] } = {}) {
  if (tools.includes('locust') && spawnSync('locust', ['--version']).error) {
    throw new Error('bench/load-memory: Locust is not installed (command `locust`): apt-get install python3-locust');
  }
  const work = mkdtempSync(join(tmpdir(), 'coord-load-memory-'));
  writeFileSync(join(work, 'think.mjs'), SCENARIO);
  writeFileSync(join(work, 'locustfile.py'), LOCUSTFILE);
  const loadBefore = load();
  const rows = [];
  try {
    for (const n of users) {
      for (const tool of tools) {
        const before = (await server.ask('count')).count;
        const samples =
          tool === 'coord'
            ? await sample(process.execPath, [cli, 'load', 'run', '--scenario', join(work, 'think.mjs'), '--users', String(n), '--spawn-rate', '1000', '--duration', `${seconds}s`, '--param', `baseUrl=${server.url}`, '--workers', String(workers), ...set.flatMap((v) => ['--set', v]), '--out', 'json'])
            : await sample('locust', ['-f', join(work, 'locustfile.py'), '--headless', '-u', String(n), '-r', '1000', '-t', `${seconds}s`, '--host', server.url, '--only-summary'], { cwd: work });
        const s = steady(samples, n);
        const sent = (await server.ask('count')).count - before;
        rows.push({ users: n, tool, ...s, perThousand: s.median / (n / 1000), rps: sent / seconds });
        process.stderr.write(`memory: ${tool} ${n} users: steady ${s.median.toFixed(0)} MB (${s.first.toFixed(0)} → ${s.last.toFixed(0)}), ${(sent / seconds).toFixed(0)} req/s\n`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const table = rows.map((r) => `| ${r.tool === 'coord' ? `\`coord load run\` (--workers ${workers}${set.map((v) => ` --set ${v}`).join('')})` : 'Locust 2.12, one process'} | ${r.users.toLocaleString('en')} | ${r.median.toFixed(0)} | ${r.first.toFixed(0)} → ${r.last.toFixed(0)} | ${r.max.toFixed(0)} | **${r.perThousand.toFixed(1)}** | ${r.rps.toFixed(0)} |`);
  return `One run per tool and size, ${seconds} s each. Each user sends GET / and waits 1 s. RSS is the tool's whole process tree (MB),
sampled each second; the steady phase starts 5 s after the last user started. Load average (1, 5, 15 min) before:
${loadBefore}; after: ${load()}. Requests per second: the server's count over the run's ${seconds} s (a tool that cannot keep 1
request per user per second shows it here).

| tool | users | steady RSS MB (median) | steady first → last | max | MB per 1,000 users | req/s |
|---|---:|---:|---|---:|---:|---:|
${table.join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  exitWithHelpIfAsked(import.meta.url);
  const { BENCH_USERS, BENCH_SECONDS, BENCH_WORKERS, BENCH_TOOLS, BENCH_SET } = process.env;
  const server = await startCountingServer();
  const report = await memoryReport(server, {
    users: (BENCH_USERS ?? '5000,20000').split(',').map(Number),
    seconds: Number(BENCH_SECONDS ?? 40),
    workers: BENCH_WORKERS ?? 'auto',
    tools: (BENCH_TOOLS ?? 'coord,locust').split(','),
    set: BENCH_SET ? BENCH_SET.split(',') : [],
  });
  server.stop();
  const text = `# load-test memory beside Locust

\`node bench/load-memory.mjs\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}.
${report}`;
  // the default run is the one kept; others (one tool, other sizes) print only
  if (!BENCH_USERS && !BENCH_TOOLS && !BENCH_WORKERS && !BENCH_SET) writeFileSync(join(here, 'results/load-memory.md'), text);
  process.stdout.write(text);
}
