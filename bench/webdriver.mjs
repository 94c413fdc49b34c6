// The WebDriver grid's cost, in one run with real Chromium, standalone (one
// process, embedded backend), split (separate processes on real Redis) and
// split with the proxy in the orchestrator's process:
//  1. session creation (POST /session until the answer) through the grid vs
//     straight to a running chromedriver — goal ≤ 1.2×;
//  2. one cheap command (GET …/title) through the grid vs straight — goal
//     ≤ 1 ms added at p50;
// and the CPU the grid's processes spend per session and per command, which
// a loaded machine does not distort the way it distorts latency.
// Run: npx tsc -p . && node bench/webdriver.mjs (SESSIONS=…, COMMANDS=… to change the counts)
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { coord } from '../dist/test/support/cli.js';
import { freePort, startRedis } from '../dist/test/support/redis.js';
import { newSessionBody } from '../dist/test/support/webdriver.js';

const SESSIONS = Number(process.env.SESSIONS ?? 20);
const COMMANDS = Number(process.env.COMMANDS ?? 1000);
const agent = new Agent({ keepAlive: true });
const RESULT = new URL('./results/webdriver.md', import.meta.url);

// whatever happens, nothing this bench started outlives it
const cleanups = [];
const cleanup = async () => {
  for (const undo of cleanups.splice(0).reverse()) await Promise.resolve().then(undo).catch(() => {});
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));
/** A grid process, stopped (SIGTERM, then its whole group) at the end or on failure. */
function start(args) {
  const proc = coord(args);
  cleanups.push(async () => {
    proc.kill('SIGTERM');
    await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 10_000))]);
    proc.kill('SIGKILL');
  });
  return proc;
}

/** One W3C request with a keep-alive connection, as client libraries do. */
function call(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { 'content-type': 'application/json', ...(data ? { 'content-length': data.length } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** The port of the chromedriver clients talk to straight (started by main). */
let driverPort = 0;

/** Times one POST /session; with `apiPort`, also the grid's own share: the total less chromedriver's own session creation (DALIVE → LSINIT in the session log). */
async function createAndQuit(port, apiPort, own) {
  const started = performance.now();
  const created = await call(port, 'POST', '/session', newSessionBody());
  const ms = performance.now() - started;
  if (created.status !== 200) throw new Error(`session not created on port ${port}: ${JSON.stringify(created.body)}`);
  await call(port, 'DELETE', `/session/${created.body.value.sessionId}`);
  if (apiPort) {
    const { log } = (await call(apiPort, 'GET', `/api/sessions/${created.body.value.sessionId}`)).body;
    const at = (code) => Date.parse(log.find((e) => e.code === code).time);
    own?.push(ms - (at('LSINIT') - at('DALIVE')));
  }
  return ms;
}

async function timeTitle(port, id, into) {
  const started = performance.now();
  const answer = await call(port, 'GET', `/session/${id}/title`);
  into.push(performance.now() - started);
  if (answer.body.value !== 'bench') throw new Error(`unexpected title ${JSON.stringify(answer.body)}`);
}

/** CPU time (ms) the processes have used so far: user + system, from /proc (clock ticks of 10 ms). */
const cpuMs = (pids) =>
  pids.reduce((sum, pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) * 10;
  }, 0);

/** Both measures against one grid, interleaved with the same against the running chromedriver. */
async function measure(gridPort, apiPort, pids) {
  await createAndQuit(driverPort);
  await createAndQuit(gridPort);
  const create = { direct: [], grid: [], own: [], cpu: 0 };
  for (let i = 0; i < SESSIONS; i++) {
    // interleaved, so drift on the machine affects both alike
    create.direct.push(await createAndQuit(driverPort));
    const before = cpuMs(pids);
    create.grid.push(await createAndQuit(gridPort, apiPort, create.own));
    create.cpu += cpuMs(pids) - before;
  }
  const direct = (await call(driverPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  const viaGrid = (await call(gridPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  await call(driverPort, 'POST', `/session/${direct}/url`, { url: 'data:text/html,<title>bench</title>' });
  await call(gridPort, 'POST', `/session/${viaGrid}/url`, { url: 'data:text/html,<title>bench</title>' });
  const title = { direct: [], grid: [] };
  for (let i = 0; i < 50; i++) await timeTitle(driverPort, direct, []), await timeTitle(gridPort, viaGrid, []);
  const cpuBefore = cpuMs(pids);
  for (let i = 0; i < COMMANDS; i++) {
    await timeTitle(driverPort, direct, title.direct);
    await timeTitle(gridPort, viaGrid, title.grid);
  }
  const cpuPerCommand = (cpuMs(pids) - cpuBefore) / COMMANDS;
  await call(driverPort, 'DELETE', `/session/${direct}`);
  await call(gridPort, 'DELETE', `/session/${viaGrid}`);
  const r = {
    cd: median(create.direct), cg: median(create.grid), own: median(create.own), cpuSession: create.cpu / SESSIONS,
    td: median(title.direct), tg: median(title.grid),
    td90: pct(title.direct, 0.9), tg90: pct(title.grid, 0.9), cpu: cpuPerCommand,
  };
  console.error(`session ${r.cd.toFixed(0)} / ${r.cg.toFixed(0)} ms; getTitle p50 ${r.td.toFixed(3)} / ${r.tg.toFixed(3)} ms`);
  return r;
}

/** Starts processes (each a `coord run` argument list), measures them (the grid's CPU: every process but a lone API), stops them. */
async function gridOf(argLists, gridPort, apiPort) {
  const procs = argLists.map(start);
  await Promise.all(procs.map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
  const gridPids = procs.filter((p, i) => argLists[i].join(' ').indexOf('--role api') === -1).map((p) => p.child.pid);
  const r = await measure(gridPort, apiPort, gridPids);
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
  return r;
}

async function main() {
  // straight: a chromedriver already running, as a client talking to it directly would have
  driverPort = await freePort();
  const driver = spawn('/usr/bin/chromedriver', [`--port=${driverPort}`], { stdio: 'ignore' });
  cleanups.push(() => driver.kill('SIGTERM'));
  for (let tries = 0; ; tries++) {
    try {
      if ((await call(driverPort, 'GET', '/status')).body.value?.ready) break;
    } catch {}
    if (tries > 600) throw new Error(`chromedriver did not answer /status on port ${driverPort} within 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }

  // 1. standalone: `coord run --plugin webdriver`, every role in one process, embedded backend
  const standalonePort = await freePort();
  const standaloneApi = await freePort();
  console.error('standalone…');
  const one = await gridOf([['run', '--plugin', 'webdriver', '--set', `webdriver.proxy.port=${standalonePort}`, '--set', `webdriver.api.port=${standaloneApi}`]], standalonePort, standaloneApi);

  // 2. split: proxy, manager and orchestrator as separate processes on real Redis
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const common = ['--redis', redis.url, '--set', 'webdriver.heartbeat.interval=5'];
  const splitArgs = (prefix, gridPort, apiPort, colocated) => {
    const c = [...common, '--prefix', prefix];
    const orchestrator = ['--role', 'orchestrator', '--set', 'webdriver.orchestrator.slots=2'];
    const proxy = ['--role', 'proxy', '--set', `webdriver.proxy.port=${gridPort}`];
    return [
      ...(colocated
        ? [['run', '--plugin', 'webdriver', ...proxy, ...orchestrator, ...c]]
        : [['run', '--plugin', 'webdriver', ...proxy, ...c], ['run', '--plugin', 'webdriver', ...orchestrator, ...c]]),
      ['run', '--plugin', 'webdriver', '--role', 'manager', ...c],
      ['run', '--plugin', 'webdriver', '--role', 'api', '--set', `webdriver.api.port=${apiPort}`, ...c],
    ];
  };
  console.error('split…');
  const gridPort = await freePort();
  const apiPort = await freePort();
  const split = await gridOf(splitArgs('{bench-wd}:', gridPort, apiPort, false), gridPort, apiPort);

  // 3. split, the proxy in the orchestrator's process: commands reach the node in-process
  console.error('split, proxy with the orchestrator…');
  const colocatedPort = await freePort();
  const colocatedApi = await freePort();
  const colocated = await gridOf(splitArgs('{bench-wd2}:', colocatedPort, colocatedApi, true), colocatedPort, colocatedApi);

  // 4. reference: a bare Node.js proxy in front of the same chromedriver (getTitle only)
  const refPort = await freePort();
  const ref = spawn(process.execPath, [new URL('./webdriver-reference-proxy.mjs', import.meta.url).pathname, String(driverPort), String(refPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => ref.kill('SIGTERM'));
  await new Promise((r) => ref.stdout.once('data', r));
  const refSession = (await call(driverPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  await call(driverPort, 'POST', `/session/${refSession}/url`, { url: 'data:text/html,<title>bench</title>' });
  const refTitle = { direct: [], proxy: [] };
  for (let i = 0; i < 50; i++) await timeTitle(driverPort, refSession, []), await timeTitle(refPort, refSession, []);
  const refCpuBefore = cpuMs([ref.pid]);
  for (let i = 0; i < COMMANDS; i++) {
    await timeTitle(driverPort, refSession, refTitle.direct);
    await timeTitle(refPort, refSession, refTitle.proxy);
  }
  const reference = { td: median(refTitle.direct), tp: median(refTitle.proxy), cpu: (cpuMs([ref.pid]) - refCpuBefore) / COMMANDS };
  await call(driverPort, 'DELETE', `/session/${refSession}`);
  writeReport({ one, split, colocated, reference });
}

/** The markdown table, written to bench/results/webdriver.md. */
function writeReport({ one, split, colocated, reference }) {
  const load = loadavg()[0].toFixed(1);
  const row = (name, r) => [
    `| ${name}: session creation (POST /session), median of ${SESSIONS} | ${r.cd.toFixed(0)} ms | ${r.cg.toFixed(0)} ms | ${(r.cg / r.cd).toFixed(2)}× | ≤ 1.2× |`,
    `| ${name}: … of which the grid's own work (total − chromedriver's DALIVE → LSINIT) | | ${r.own.toFixed(0)} ms | | |`,
    `| ${name}: CPU the grid's processes spend per session (create + quit) | | ${r.cpuSession.toFixed(0)} ms | | |`,
    `| ${name}: getTitle p50 of ${COMMANDS} | ${r.td.toFixed(3)} ms | ${r.tg.toFixed(3)} ms | +${(r.tg - r.td).toFixed(3)} ms | ≤ 1 ms added |`,
    `| ${name}: getTitle p90 | ${r.td90.toFixed(3)} ms | ${r.tg90.toFixed(3)} ms | +${(r.tg90 - r.td90).toFixed(3)} ms | |`,
    `| ${name}: CPU the grid's processes spend per getTitle | | ${r.cpu.toFixed(3)} ms | | |`,
  ].join('\n');
  const out = `# WebDriver grid overhead, ${new Date().toISOString().slice(0, 10)} (one run on this machine, 1-min load average ${load} on ${cpus().length} cores)

| measure | straight to chromedriver | through the grid | ratio / added | goal |
|---|---:|---:|---:|---|
${row('standalone', one)}
${row('split', split)}
${row('split, proxy with the orchestrator', colocated)}
| reference, a bare Node.js HTTP proxy: getTitle p50 | ${reference.td.toFixed(3)} ms | ${reference.tp.toFixed(3)} ms | +${(reference.tp - reference.td).toFixed(3)} ms | |
| reference: CPU it spends per getTitle | | ${reference.cpu.toFixed(3)} ms | | |

- standalone: \`coord run --plugin webdriver\` (every role in one process, embedded backend);
  split: proxy, manager and orchestrator as separate \`coord run --role …\` processes on real Redis;
  split, proxy with the orchestrator: \`--role proxy --role orchestrator\` in one process, the manager apart.
- Straight means a chromedriver already running. Through the grid each session gets a
  chromedriver from the orchestrator's warm pool (the one the previous session handed back,
  or one started ahead) and its own Chromium; commands go client → proxy → node → chromedriver
  (where the proxy and the node share a process it hands them over in-process; split, that is
  one more loopback HTTP hop and process).
- CPU rows: user + system time of the grid's processes (not chromedriver's or Chromium's),
  from /proc, in 10 ms ticks summed over the run.
- Measures are interleaved (direct, grid, direct, grid…) so drift on the machine affects both alike.
- On a loaded machine every extra process a request crosses waits for a CPU; the CPU rows are
  the work done per command (the grid's processes; the reference proxy), whatever the load.
  The reference (bench/webdriver-reference-proxy.mjs) is the least any process between client
  and chromedriver costs on this machine.
`;
  writeFileSync(RESULT, out);
  console.log(out);
  console.log(`results written to ${fileURLToPath(RESULT)}`);
}

try {
  await main();
} finally {
  await cleanup();
  agent.destroy();
}
