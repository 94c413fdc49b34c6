// The WebDriver grid's cost, in one run with real Chromium, standalone (one
// process, embedded backend) and split (separate processes on real Redis):
//  1. session creation (POST /session until the answer) through the grid vs
//     straight to a running chromedriver — goal ≤ 1.2×;
//  2. one cheap command (GET …/title) through the grid vs straight — goal
//     ≤ 1 ms added at p50.
// Run: npx tsc -p . && node bench/webdriver.mjs
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { coord } from '../dist/test/support/cli.js';
import { freePort, startRedis } from '../dist/test/support/redis.js';
import { newSessionBody } from '../dist/test/support/webdriver.js';

const SESSIONS = Number(process.env.SESSIONS ?? 12);
const COMMANDS = Number(process.env.COMMANDS ?? 1000);
const agent = new Agent({ keepAlive: true });

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

// straight: a chromedriver already running, as a client talking to it directly would have
const driverPort = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const driver = spawn('/usr/bin/chromedriver', [`--port=${driverPort}`], { stdio: 'ignore' });
for (;;) {
  try {
    if ((await call(driverPort, 'GET', '/status')).body.value?.ready) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 50));
}

async function createAndQuit(port) {
  const started = performance.now();
  const created = await call(port, 'POST', '/session', newSessionBody());
  const ms = performance.now() - started;
  if (created.status !== 200) throw new Error(`session not created on port ${port}: ${JSON.stringify(created.body)}`);
  await call(port, 'DELETE', `/session/${created.body.value.sessionId}`);
  return ms;
}

async function timeTitle(port, id, into) {
  const started = performance.now();
  const answer = await call(port, 'GET', `/session/${id}/title`);
  into.push(performance.now() - started);
  if (answer.body.value !== 'bench') throw new Error(`unexpected title ${JSON.stringify(answer.body)}`);
}

/** Both measures against one grid, interleaved with the same against the running chromedriver. */
async function measure(gridPort) {
  await createAndQuit(driverPort);
  await createAndQuit(gridPort);
  const create = { direct: [], grid: [] };
  for (let i = 0; i < SESSIONS; i++) {
    // interleaved, so drift on the machine affects both alike
    create.direct.push(await createAndQuit(driverPort));
    create.grid.push(await createAndQuit(gridPort));
  }
  const direct = (await call(driverPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  const viaGrid = (await call(gridPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  await call(driverPort, 'POST', `/session/${direct}/url`, { url: 'data:text/html,<title>bench</title>' });
  await call(gridPort, 'POST', `/session/${viaGrid}/url`, { url: 'data:text/html,<title>bench</title>' });
  const title = { direct: [], grid: [] };
  for (let i = 0; i < 50; i++) await timeTitle(driverPort, direct, []), await timeTitle(gridPort, viaGrid, []);
  for (let i = 0; i < COMMANDS; i++) {
    await timeTitle(driverPort, direct, title.direct);
    await timeTitle(gridPort, viaGrid, title.grid);
  }
  await call(driverPort, 'DELETE', `/session/${direct}`);
  await call(gridPort, 'DELETE', `/session/${viaGrid}`);
  const r = {
    cd: median(create.direct), cg: median(create.grid),
    td: median(title.direct), tg: median(title.grid),
    td90: pct(title.direct, 0.9), tg90: pct(title.grid, 0.9),
  };
  console.error(`session ${r.cd.toFixed(0)} / ${r.cg.toFixed(0)} ms; getTitle p50 ${r.td.toFixed(3)} / ${r.tg.toFixed(3)} ms`);
  return r;
}

// 1. standalone: `coord run --plugin webdriver`, every role in one process, embedded backend
const standalonePort = await freePort();
const standalone = coord(['run', '--plugin', 'webdriver', '--set', `webdriver.proxy.port=${standalonePort}`, '--set', 'webdriver.api.port=0']);
await standalone.waitFor((l) => l.msg === 'ready', 90_000);
const one = await measure(standalonePort);
standalone.kill('SIGTERM');
await standalone.exited;

// 2. split: proxy, manager and orchestrator as separate processes on real Redis
const redis = await startRedis();
const gridPort = await freePort();
const common = ['--redis', redis.url, '--prefix', '{bench-wd}:', '--set', 'webdriver.heartbeat.interval=5'];
const procs = [
  coord(['run', '--plugin', 'webdriver', '--role', 'proxy', '--set', `webdriver.proxy.port=${gridPort}`, ...common]),
  coord(['run', '--plugin', 'webdriver', '--role', 'manager', ...common]),
  coord(['run', '--plugin', 'webdriver', '--role', 'orchestrator', '--set', 'webdriver.orchestrator.slots=2', ...common]),
];
await Promise.all(procs.map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
const split = await measure(gridPort);
for (const p of procs) p.kill('SIGTERM');
await Promise.all(procs.map((p) => p.exited));
await redis.stop();
driver.kill('SIGTERM');
agent.destroy();

const load = (await import('node:os')).loadavg()[0].toFixed(1);
const row = (name, r) => [
  `| ${name}: session creation (POST /session), median of ${SESSIONS} | ${r.cd.toFixed(0)} ms | ${r.cg.toFixed(0)} ms | ${(r.cg / r.cd).toFixed(2)}× | ≤ 1.2× |`,
  `| ${name}: getTitle p50 of ${COMMANDS} | ${r.td.toFixed(3)} ms | ${r.tg.toFixed(3)} ms | +${(r.tg - r.td).toFixed(3)} ms | ≤ 1 ms added |`,
  `| ${name}: getTitle p90 | ${r.td90.toFixed(3)} ms | ${r.tg90.toFixed(3)} ms | +${(r.tg90 - r.td90).toFixed(3)} ms | |`,
].join('\n');
const out = `# WebDriver grid overhead, ${new Date().toISOString().slice(0, 10)} (one run on this machine, 1-min load average ${load} on ${(await import('node:os')).cpus().length} cores)

| measure | straight to chromedriver | through the grid | ratio / added | goal |
|---|---:|---:|---:|---|
${row('standalone', one)}
${row('split', split)}

- standalone: \`coord run --plugin webdriver\` (every role in one process, embedded backend);
  split: proxy, manager and orchestrator as separate \`coord run --role …\` processes on real Redis.
- Straight means a chromedriver already running. Through the grid each session gets its own
  chromedriver (a warm one, started ahead by the orchestrator, when there is one) and its own
  Chromium; commands go client → proxy → node → chromedriver (in standalone the proxy hands
  them to the node in-process; split, that is one more loopback HTTP hop and process).
- Measures are interleaved (direct, grid, direct, grid…) so drift on the machine affects both alike.
`;
writeFileSync(new URL('./results/webdriver.md', import.meta.url), out);
console.log(out);
