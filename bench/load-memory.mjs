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
//   BENCH_TOOLS=coord,locust by default)
//
// Writes bench/results/load-memory.md.
import { spawn, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const USERS = (process.env.BENCH_USERS ?? '5000,20000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 40);
const WORKERS = process.env.BENCH_WORKERS ?? 'auto';
const TOOLS = (process.env.BENCH_TOOLS ?? 'coord,locust').split(',');
const cli = join(here, '../dist/cli/main.js');
const work = mkdtempSync(join(tmpdir(), 'coord-load-memory-'));
const loadBefore = loadavg().map((l) => l.toFixed(2)).join(' ');

const server = fork(join(here, 'load-server.mjs'));
const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.port)));
const baseUrl = `http://127.0.0.1:${port}`;

writeFileSync(join(work, 'think.mjs'), `export default {
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'get', run: async (user) => { await user.http.get('/', { metric: 'GET /' }); await user.sleep(1000); } }],
};
`);
writeFileSync(join(work, 'locustfile.py'), `from locust import HttpUser, task, constant

class ThinkUser(HttpUser):
    wait_time = constant(1)

    @task
    def get(self):
        self.client.get("/")
`);

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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const requests = async () => {
  server.send({ type: 'count' });
  return new Promise((resolve) => server.once('message', (m) => resolve(m.count)));
};

/** The steady phase: every user started (within 1,000 a second, and 5 s more) to the end. */
function steady(samples, users) {
  const from = Math.ceil(users / 1000) + 5;
  const phase = samples.slice(from, -1);
  return { median: median(phase), first: phase[0], last: phase.at(-1), max: Math.max(...samples) };
}

const rows = [];
for (const users of USERS) {
  for (const tool of TOOLS) {
    const before = await requests();
    const samples =
      tool === 'coord'
        ? await sample(process.execPath, [cli, 'load', 'run', '--scenario', join(work, 'think.mjs'), '--users', String(users), '--spawn-rate', '1000', '--duration', `${SECONDS}s`, '--param', `baseUrl=${baseUrl}`, '--workers', WORKERS, '--out', 'json'])
        : await sample('locust', ['-f', join(work, 'locustfile.py'), '--headless', '-u', String(users), '-r', '1000', '-t', `${SECONDS}s`, '--host', baseUrl, '--only-summary'], { cwd: work });
    const s = steady(samples, users);
    const sent = (await requests()) - before;
    rows.push({ users, tool, ...s, perThousand: s.median / (users / 1000), rps: sent / SECONDS });
    process.stderr.write(`${tool} ${users} users: steady ${s.median.toFixed(0)} MB (${s.first.toFixed(0)} → ${s.last.toFixed(0)}), ${(sent / SECONDS).toFixed(0)} req/s\n`);
  }
}
server.kill();

const table = rows.map((r) => `| ${r.tool === 'coord' ? `\`coord load run\` (--workers ${WORKERS})` : 'Locust 2.12, one process'} | ${r.users.toLocaleString('en')} | ${r.median.toFixed(0)} | ${r.first.toFixed(0)} → ${r.last.toFixed(0)} | ${r.max.toFixed(0)} | **${r.perThousand.toFixed(1)}** | ${r.rps.toFixed(0)} |`);
const text = `# load-test memory beside Locust

\`node bench/load-memory.mjs\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}: one run per tool and size,
${SECONDS} s each. Each user sends GET / and waits 1 s. RSS is the tool's whole process tree (MB), sampled each second; the
steady phase starts 5 s after the last user started. Load average (1, 5, 15 min) before: ${loadBefore}; after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}.
Requests per second: the server's count over the run's ${SECONDS} s (a tool that cannot keep 1 request per user per
second shows it here).

| tool | users | steady RSS MB (median) | steady first → last | max | MB per 1,000 users | req/s |
|---|---:|---:|---|---:|---:|---:|
${table.join('\n')}
`;
// the default run is the one kept; others (one tool, other sizes) print only
if (!process.env.BENCH_USERS && !process.env.BENCH_TOOLS && !process.env.BENCH_WORKERS) writeFileSync(join(here, 'results/load-memory.md'), text);
process.stdout.write(text);
