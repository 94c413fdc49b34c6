// load-test's cost beside autocannon's and Locust's, in one run, against one
// local server (its own process, counting requests and connections), in
// paired rounds (the runs of a round in turned-round order, each ratio taken
// within a round, the median reported with the spread):
//  1. start-up: the first request and the CPU of `coord load run` with 1 user
//     for 1 s vs autocannon's CLI (bench/load-startup.mjs);
//  2. a 10 s test with its start-up: `coord load run --users 50` (--workers 1
//     and auto) vs autocannon -c 50 (and -w N), whole processes, requests per
//     CPU-second;
//  3. `coord load run` as users run it (its own process: orchestrator,
//     embedded backend and worker) vs autocannon's own process, in requests
//     per CPU-second, startup excluded (from its first progress line, when
//     its users run, to its summary): `--workers 1` (one thread of users)
//     vs autocannon's one thread, `--workers auto` (one per core, load
//     run's default) vs autocannon with --workers = the machine's cores
//     (both process trees' CPU), and auto vs --workers 1.
//     LOAD_BENCH_WORKERS_AUTO=0 leaves out the auto runs;
//  4. in one process: one worker's requests per second vs autocannon with the
//     same connections (goal ≥ 1.0×), its dispatch alone on the same
//     connections (a callback per response, nothing else: the floor of coord's
//     client), metrics recorded vs not (goal ≤ 5% drop); and processes apart:
//     one worker process vs autocannon's, two worker processes vs one, on Redis;
//  5. memory: RSS per 1,000 users at 5,000 and 20,000 users with 1 s of think
//     time vs Locust 2.12 (bench/load-memory.mjs; Debian's python3-locust).
// Requests are counted by the server, so every tool is measured the same way.
// In 4, each run is measured whole (the tool's start to its end: coord's
// includes its test's start and stop through Redis) and over a steady window
// in its middle (what the tool sustains once running); the CPU time this
// process spends per request moves much less with the load than throughput,
// so it is reported too; and what metrics cost is also measured apart: the
// same path (record each request, flush, merge, result) run alone, in CPU µs
// per request, over coord's CPU µs per request.
// Runs unattended (~25 min): npm run build && node bench/load.mjs
// Writes bench/results/load.md. LOAD_BENCH_ONLY=startup,whole,cli,throughput,memory
// (any of them) runs only those and prints them; LOAD_BENCH_ONLY=cli alone also writes
// bench/results/load-cli.md; LOAD_BENCH_ONLY=worker: only 4's one worker process vs
// autocannon's, LOAD_BENCH_WORKER_ROUNDS rounds (10 by default), into bench/results/load-worker.md.
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import { loadConfig } from '../dist/core/config.js';
import { connectBackend } from '../dist/adapters/index.js';
import { startRoles } from '../dist/core/runtime.js';
import plugin from '../dist/plugins/load-test/index.js';
import { readBatches } from '../dist/plugins/load-test/run-lifecycle/keyspace.js';
import { MetricsRecorder } from '../dist/plugins/load-test/metrics/recorder.js';
import { ResultAggregator } from '../dist/plugins/load-test/metrics/results.js';
import { coord } from '../dist/test/support/cli.js';
import { startRedis } from '../dist/test/support/redis.js';
import { processesCpuUs, processTreeCpuUs } from './proc-cpu.mjs';
import { startupReport } from './load-startup.mjs';
import { memoryReport } from './load-memory.mjs';
import { autocannonArgv, loadRunArgv, median, pairedRounds, range } from './load-process-runs.mjs';
import { exitWithHelpIfAsked } from './help.mjs';
import { CONNECTIONS, autocannonProcess, autocannonRun as autocannonOn, coordRun as coordOn, loadRunProcess, startTarget, connectionRun } from './load-runs.mjs';

exitWithHelpIfAsked(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const SECONDS = 5;
/** The steady-state window of a run (seconds after its start): without either tool's start and stop. */
const WINDOW = [1, SECONDS - 1];
/** Rounds of the in-process comparisons (autocannon, coord's connections alone, undici's Client alone, metrics on, metrics off). */
const ROUNDS = 12;
/** Rounds of the worker-process comparisons (autocannon in its own process, one worker, two workers). */
const WORKER_ROUNDS = Number(process.env.LOAD_BENCH_WORKER_ROUNDS ?? 10);
const CORES = cpus().length;
const load = () => loadavg().map((n) => n.toFixed(2)).join(', ');
const loadBefore = load();

const target = await startTarget();
const { url, measure, span, stop: stopServer } = target;
const ONLY = process.env.LOAD_BENCH_ONLY?.split(',');
const ONLY_WORKER = process.env.LOAD_BENCH_ONLY === 'worker';
/** Whether this run includes `section` (LOAD_BENCH_ONLY). */
const wants = (section) => !ONLY || ONLY.includes(section);
const WORKERS_AUTO = process.env.LOAD_BENCH_WORKERS_AUTO !== '0';
/** Rounds of `coord load run`'s process vs autocannon's. */
const CLI_ROUNDS = 10;
/** Rounds of the start-up runs (1 user, 1 s) and of the 10 s tests with their start-up. */
const STARTUP_ROUNDS = 11;
const WHOLE_ROUNDS = 5;
const WHOLE_SECONDS = 10;

const rps = (list) => median(list.map((r) => r.rps));
const cpu = (list) => median(list.map((r) => r.cpuUs));
const serverCpu = (list) => median(list.map((r) => r.serverCpuUs));
const connections = (list) => median(list.map((r) => r.connections));

function flags(extra) {
  // load-test.connections 0 (the default): each user has its own connection, so CONNECTIONS users = CONNECTIONS connections.
  return [{ path: 'load-test.api', value: false }, { path: 'load-test.connections', value: 0 }, { path: 'log.level', value: 'warn' }, ...extra];
}

// 4. `coord load run`'s process vs autocannon's, requests per CPU-second (its process tree's CPU over the requests the
// server saw), startup excluded. Run first, while nothing of this bench's own has warmed up in this process (it does
// not matter to them: each is a process of its own).
async function loadRunMeasured(args = []) {
  const run = loadRunProcess(url, SECONDS + 1, args);
  const result = await span(run.running, run.summarized, () => processTreeCpuUs(run.pid));
  await run.exited;
  return result;
}
async function autocannonMeasured(workers = 0) {
  const ac = await autocannonProcess(url, SECONDS, workers);
  const result = await measure(ac.run, undefined, () => processTreeCpuUs(ac.pid));
  ac.stop();
  return result;
}
// Worker processes on real Redis, the orchestrator in this process: one worker process vs autocannon in a process of
// its own (each the only client process), and two worker processes vs one. The second worker is stopped and started
// again between rounds, so the sides alternate; one worker runs next to autocannon in every round.
async function workerComparison() {
  const redis = await startRedis();
  const prefix = '{bench}:';
  const common = ['--redis', redis.url, '--prefix', prefix];
  const remote = await startRoles({
    plugins: [plugin],
    backend: connectBackend,
    config: loadConfig({ plugins: [plugin], env: {}, flags: flags([{ path: 'roles', value: ['orchestrator'] }, { path: 'redis.url', value: redis.url }, { path: 'redis.keyPrefix', value: prefix }]) }),
  });
  const remoteController = remote.role('load-test', 'orchestrator').controller;
  const startWorker = async (id) => {
    const p = coord(['run', '--plugin', 'load-test', '--role', 'worker', '--set', `load-test.workerId=${id}`, ...common]);
    await p.waitFor((l) => l.msg === 'worker registered');
    return p;
  };
  const stopWorker = async (p) => {
    p.kill('SIGTERM');
    await p.exited;
  };
  const workersCpu = (...ps) => () => processesCpuUs(ps.map((p) => p.child.pid));
  const w1 = await startWorker('w1');
  let w2 = await startWorker('w2');
  const coordRun = (seconds = SECONDS) => coordOn(remoteController, url, seconds, true);
  for (let i = 0; i < 2; i++) await measure(coordRun(2)); // warms both workers
  const workerRuns = { autocannon: [], one: [], two: [] };
  for (let round = 0; round < WORKER_ROUNDS; round++) {
    for (const name of round % 2 === 0 ? ['autocannon', 'one', 'two'] : ['two', 'one', 'autocannon']) {
      if (name === 'autocannon') {
        const ac = await autocannonProcess(url, SECONDS);
        workerRuns.autocannon.push(await measure(ac.run, WINDOW, () => processesCpuUs([ac.pid])));
        ac.stop();
        continue;
      }
      if (name === 'one' && w2) {
        await stopWorker(w2);
        w2 = undefined;
      }
      if (name === 'two' && !w2) {
        w2 = await startWorker('w2');
        await measure(coordRun(1)); // its JIT
      }
      workerRuns[name].push(await measure(coordRun(), WINDOW, name === 'one' ? workersCpu(w1) : workersCpu(w1, w2)));
    }
  }
  await remote.stop('bench');
  await stopWorker(w1);
  if (w2) await stopWorker(w2);
  await redis.stop();
  return workerRuns;
}

if (ONLY_WORKER) {
  const one = await workerComparison();
  stopServer();
  const text = `# load-test throughput: one worker process vs autocannon's process

\`LOAD_BENCH_ONLY=worker node bench/load.mjs\` — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ${CORES} cores. Load average before: ${loadBefore}; after: ${load()}.
${WORKER_ROUNDS} rounds, the runs of a round in turned-round order (a second worker process runs in the third run of each round, as in the whole bench).
A worker process (\`coord run --plugin load-test --role worker\`, on a redis-server; the orchestrator in the bench's process) and autocannon's
own process, ${CONNECTIONS} connections / users, ${SECONDS} s a run. CPU: each process's user + system time (/proc) over the requests the server
counted. A ratio is the worker's requests per CPU-second over autocannon's in the same round: the median, the middle half, every round's.

| load generator | requests/s (median) | CPU µs/request (median) |
|---|---:|---:|
| autocannon's process | ${Math.round(rps(one.autocannon)).toLocaleString('en-US')} | ${cpu(one.autocannon).toFixed(1)} |
| one worker process | ${Math.round(rps(one.one)).toLocaleString('en-US')} | ${cpu(one.one).toFixed(1)} |

| comparison | requests per CPU-second | goal |
|---|---|---|
| one worker process vs autocannon's process | ${perCpu(one.one, one.autocannon)} | ≥ 1.0× |
`;
  writeFileSync(join(here, 'results/load-worker.md'), text);
  console.log(text);
  process.exit(0);
}

/** Median over the rounds of b's CPU per request over a's: a's requests per CPU-second relative to b's; with the middle half. */
function perCpu(a, b) {
  const r = a.map((x, i) => b[i].cpuUs / x.cpuUs).sort((x, y) => x - y);
  return `**${median(r).toFixed(2)}×** (${r[Math.floor(r.length / 4)].toFixed(2)}–${r[Math.ceil((3 * r.length) / 4) - 1].toFixed(2)}; all: ${r.map((x) => x.toFixed(2)).join(', ')})`;
}
const fmtInt = (n) => Math.round(n).toLocaleString('en-US');

/** 2. A 10 s test, start-up included: whole processes, requests per CPU-second (the section, markdown). */
async function wholeSection() {
  const loadAtStart = load();
  const of = { users: CONNECTIONS, connections: CONNECTIONS, seconds: WHOLE_SECONDS };
  const tools = [
    [`autocannon -c ${CONNECTIONS} -d ${WHOLE_SECONDS}`, autocannonArgv(url, of)],
    ['`coord load run --workers 1`', loadRunArgv(url, of)],
  ];
  if (WORKERS_AUTO) {
    tools.push([`autocannon -c ${CONNECTIONS} -d ${WHOLE_SECONDS} -w ${CORES}`, autocannonArgv(url, { ...of, workers: CORES })]);
    tools.push(['`coord load run --workers auto`', loadRunArgv(url, { ...of, workers: 'auto' })]);
  }
  const runs = await pairedRounds(target, tools, WHOLE_ROUNDS, 'whole-test round');
  const perCpuSecond = (r) => r.count / (r.cpuMs / 1000);
  /** a's requests per CPU-second over b's, round by round: the median (lowest–highest). */
  const vs = (a, b) => {
    const r = runs.get(a).map((x, i) => perCpuSecond(x) / perCpuSecond(runs.get(b)[i]));
    return `**${median(r).toFixed(2)}×** (${range(r)})`;
  };
  const row = ([name]) => {
    const list = runs.get(name);
    return `| ${name} | ${fmtInt(median(list.map((r) => r.count / (r.wallMs / 1000))))} | ${fmtInt(median(list.map((r) => r.cpuMs)))} | ${fmtInt(median(list.map(perCpuSecond)))} |`;
  };
  const [ac, one, acN, auto] = tools.map(([name]) => name);
  return `## A ${WHOLE_SECONDS} s test, start-up included

${WHOLE_ROUNDS} paired rounds after one warm-up round. Each tool runs as its users run it, a whole process from spawn to exit
(bench/load-process-runs.mjs): \`coord load run --scenario bench/load-scenario.mjs --users ${CONNECTIONS} --duration ${WHOLE_SECONDS}s\` and
autocannon's CLI with ${CONNECTIONS} connections for ${WHOLE_SECONDS} s. CPU: the process's user + system time, every thread (/usr/bin/time, 10 ms
ticks), start-up and stop included; requests: the server's count. A ratio is coord's requests per CPU-second over autocannon's in
the same round: median (lowest–highest round). Load average (1, 5, 15 min) before: ${loadAtStart}; after: ${load()}.

| tool | requests/s over the whole process (median) | CPU ms (median) | requests per CPU-second |
|---|---:|---:|---:|
${tools.map(row).join('\n')}

| comparison | requests per CPU-second | goal |
|---|---|---|
| ${one} vs autocannon | ${vs(one, ac)} | ≥ 0.8× |
${WORKERS_AUTO ? `| ${auto} vs autocannon -w ${CORES} | ${vs(auto, acN)} | ≥ 0.8× |\n| ${auto} vs autocannon | ${vs(auto, ac)} | |\n` : ''}`;
}

/** 3. `coord load run` vs autocannon, startup excluded: the section (markdown). */
async function cliSection() {
  const cliRuns = { autocannon: [], loadRun: [], autocannonWorkers: [], loadRunAuto: [] };
  await loadRunMeasured(['--workers', '1']); // the OS's file cache of node, the CLI's modules and the scenario
  for (let round = 0; round < CLI_ROUNDS; round++) {
    const pairs = [[cliRuns.loadRun, () => loadRunMeasured(['--workers', '1'])], [cliRuns.autocannon, () => autocannonMeasured()]];
    if (WORKERS_AUTO) pairs.push([cliRuns.loadRunAuto, () => loadRunMeasured(['--workers', 'auto'])], [cliRuns.autocannonWorkers, () => autocannonMeasured(CORES)]);
    for (const [list, run] of round % 2 === 0 ? pairs : [...pairs].reverse()) list.push(await run());
  }
  const cliLoad = load();
  const cliRow = (name, list) => `| ${name} | ${Math.round(median(list.map((r) => r.rps))).toLocaleString('en-US')} | ${median(list.map((r) => r.cpuUs)).toFixed(1)} | ${Math.round(1e6 / median(list.map((r) => r.cpuUs))).toLocaleString('en-US')} |`;
  return `## \`coord load run\` vs autocannon, per CPU-second (startup excluded)

${CLI_ROUNDS} rounds after a first run, the two (or four) runs of a round in turned-round order. \`coord load run\`: \`node dist/bundle/coord.js load run
--scenario bench/load-scenario.mjs --users ${CONNECTIONS} --duration ${SECONDS + 1}s --workers 1\` in its own process (orchestrator and embedded
backend on the main thread, one worker's users in a thread), and the same with \`--workers auto\` (one worker thread per core), measured from its first progress line (node's start, the CLI's modules, the scenario's load and the test's start are over)
to its printed summary (the test stopped, its last metrics merged). autocannon: its own process, started ahead (bench/load-autocannon.mjs),
${CONNECTIONS} connections, ${SECONDS} s, measured whole; with --workers ${CORES}, its own worker threads. CPU: the process tree's user + system time (/proc, 10 ms ticks) over the requests the
server counted in that span. A ratio is coord's requests per CPU-second over autocannon's in the same round (autocannon's CPU µs per
request over coord's); the median of the rounds, the middle half in brackets, then every round's. Load average after these rounds: ${cliLoad}.

| load generator | requests/s (median) | CPU µs/request (median) | requests per CPU-second |
|---|---:|---:|---:|
${cliRow(`autocannon's process, ${CONNECTIONS} connections`, cliRuns.autocannon)}
${cliRow('`coord load run --workers 1` (one process)', cliRuns.loadRun)}
${WORKERS_AUTO ? `${cliRow(`autocannon's process, --workers ${CORES}`, cliRuns.autocannonWorkers)}\n${cliRow('`coord load run --workers auto`', cliRuns.loadRunAuto)}\n` : ''}
| comparison | requests per CPU-second | goal |
|---|---|---|
| \`coord load run --workers 1\` vs autocannon's process | ${perCpu(cliRuns.loadRun, cliRuns.autocannon)} | ≥ 1.2× |
${WORKERS_AUTO ? `| \`coord load run --workers auto\` vs autocannon --workers ${CORES} | ${perCpu(cliRuns.loadRunAuto, cliRuns.autocannonWorkers)} | ≥ 1.0× |\n| \`coord load run --workers auto\` vs \`--workers 1\` | ${perCpu(cliRuns.loadRunAuto, cliRuns.loadRun)} | ≥ 0.9× |\n` : `| \`coord load run --workers auto\` vs autocannon --workers ${CORES} | not run (LOAD_BENCH_WORKERS_AUTO=0) | |\n`}`;
}

/** 4. In one process (coord's parts, autocannon) and processes apart (worker processes on Redis): the section (markdown). */
async function throughputSection() {
  const loadAtStart = load();
  // One worker and the orchestrator in this process, embedded backend (as `coord load run`).
  const local = await startRoles({ plugins: [plugin], backend: connectBackend, config: loadConfig({ plugins: [plugin], env: {}, flags: flags([{ path: 'roles', value: ['worker', 'orchestrator'] }]) }) });
  const controller = local.role('load-test', 'orchestrator').controller;
  const coordRun = (metrics, ctl = controller, seconds = SECONDS) => coordOn(ctl, url, seconds, metrics);
  const autocannonRun = (seconds = SECONDS) => autocannonOn(url, seconds);
  const connectionsAlone = (kind, seconds = SECONDS) => connectionRun(url, seconds, kind);
  const runOf = (name) => (name === 'autocannon' ? autocannonRun() : name === 'conn' || name === 'undici' ? connectionsAlone(name === 'conn' ? 'coord' : 'undici') : coordRun(name === 'on'));

  // Warm-up: the JIT of the server and of both clients (coord's first seconds are much slower).
  for (let i = 0; i < 2; i++) {
    await measure(autocannonRun(2));
    await measure(connectionsAlone('coord', 2));
    await measure(connectionsAlone('undici', 2));
    await measure(coordRun(true, controller, 2));
    await measure(coordRun(false, controller, 2));
  }
  const runs = { autocannon: [], conn: [], undici: [], on: [], off: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Metrics on stands next to autocannon and to metrics off in every round: the two goals' runs are back to back.
    const order = round % 2 === 0 ? ['autocannon', 'on', 'off', 'conn', 'undici'] : ['undici', 'conn', 'off', 'on', 'autocannon'];
    for (const name of order) runs[name].push(await measure(runOf(name), WINDOW));
  }
  await local.stop('bench');

  /**
   * CPU µs per request of the metrics path alone, at `perSecond` requests a second: the worker records each request
   * and writes its batch once a second, the orchestrator reads and merges the batches and makes its result once a second
   * (as `coord load run` does for its progress line). On the embedded backend, as the runs above.
   */
  async function metricsCost(perSecond, seconds = 20) {
    const backend = await createBackend({});
    const ctx = scenarioContext({ plugin, backend, keyPrefix: '', signal: new AbortController().signal });
    const recorder = new MetricsRecorder(ctx, 'bench', 1);
    const aggregator = new ResultAggregator(1, Date.now(), 'users');
    const cursors = new Map();
    const latencies = Array.from({ length: 4096 }, () => 0.5 + Math.random() * 20);
    const cpu = process.cpuUsage();
    for (let s = 0; s < seconds; s++) {
      for (let i = 0; i < perSecond; i++) recorder.record('GET /', latencies[i % 4096], undefined, 'http');
      await recorder.flush();
      for (const batch of await readBatches(ctx, cursors)) aggregator.add(batch);
      aggregator.result(Date.now());
    }
    const used = process.cpuUsage(cpu);
    await backend.close();
    return (used.user + used.system) / (perSecond * seconds);
  }
  await metricsCost(1000, 3); // its JIT
  const metricsCosts = [];
  for (let i = 0; i < 3; i++) metricsCosts.push(await metricsCost(Math.round(rps(runs.on))));
  const metricsPath = median(metricsCosts);

  const workerRuns = await workerComparison();

  /** Median over the rounds of a/b, each round's two runs side by side; with `steady`, of their steady windows. */
  const ratios = (a, b, of, steady) => a.map((r, i) => (steady ? r.steady[of] / b[i].steady[of] : r[of] / b[i][of]));
  const pairedRatio = (a, b, of = 'rps', steady = false) => median(ratios(a, b, of, steady));
  /** The middle half of the rounds' ratios: how far the machine moved them. */
  const spread = (a, b, of = 'rps', steady = false) => {
    const s = ratios(a, b, of, steady).sort((x, y) => x - y);
    return `${s[Math.floor(s.length / 4)].toFixed(2)}–${s[Math.ceil((3 * s.length) / 4) - 1].toFixed(2)}`;
  };
  const steadyOf = (list) => list.map((r) => r.steady);
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const onVsAc = pairedRatio(runs.on, runs.autocannon);
  const onVsAcSteady = pairedRatio(runs.on, runs.autocannon, 'rps', true);
  const connVsAc = pairedRatio(runs.conn, runs.autocannon);
  const connVsAcSteady = pairedRatio(runs.conn, runs.autocannon, 'rps', true);
  const onVsConn = pairedRatio(runs.on, runs.conn);
  const cpuOnVsAc = pairedRatio(runs.on, runs.autocannon, 'cpuUs');
  const cpuOnVsAcSteady = pairedRatio(runs.on, runs.autocannon, 'cpuUs', true);
  const onVsOff = pairedRatio(runs.on, runs.off);
  const onVsOffSteady = pairedRatio(runs.on, runs.off, 'rps', true);
  const cpuOnVsOff = pairedRatio(runs.on, runs.off, 'cpuUs');
  const twoVsOne = pairedRatio(workerRuns.two, workerRuns.one);
  const list = (xs, of = 'rps') => xs.map((r) => fmt(r[of])).join(', ');
  const row = (name, list) =>
    `| ${name} | ${fmt(rps(list))} | ${fmt(cpu(list))} | ${fmt(rps(steadyOf(list)))} | ${fmt(cpu(steadyOf(list)))} | ${fmt(serverCpu(list))} | ${connections(list)} |`;
  return `## In one process, and processes apart

Load average (1, 5, 15 min) before these runs: ${loadAtStart}; after: ${load()}.
One local HTTP server (Node, its own process) answers \`ok\`; requests are counted by the server.
${CONNECTIONS} connections (autocannon) = ${CONNECTIONS} users (coord), each on its own connection (load-test.connections 0, the default), ${SECONDS} s per run,
${ROUNDS} rounds after warm-up runs, the runs of a round in turned-round order; a ratio is the median of the rounds' ratios, with the
middle half of the rounds' ratios beside it (how much the machine moved them).
**Whole run**: from the tool's start to its end, so a coord run includes its test's start and stop (users assigned by Lua scripts
on the embedded backend, connections opened, users stopped, last metrics written and read). **Steady**: the same runs between
${WINDOW[0]} s and ${WINDOW[1]} s after their start: what the load generator sustains, without either tool's start and stop.
The server and the load generators share the machine's cores. CPU µs/request: the load generator's process's CPU time
over the requests the server saw (all in one process: the load generator, and coord's orchestrator, embedded Redis and
worker; processes apart: autocannon's process, or the worker processes, read from /proc).
Two shapes: **all in one process** (autocannon, or \`coord load run\`'s orchestrator, embedded backend and worker, in the
bench's process) and **processes apart** (autocannon's own process, as its CLI runs, started ahead; or worker processes as
deployed on load machines, with the orchestrator and Redis elsewhere: here the bench's process and a redis-server).
"Connections alone" sends the same requests on coord's connections (plugins/load-test/clients/http1-connection.ts: a socket per user,
http-parser-js, one request at a time) from a callback per response, with no scenario, promise or metrics: what coord's client
costs by itself; "undici's Client alone" the same on undici's Client (what coord's users' connections were before). Server CPU µs/request: the server's
process (it answers every client alike; what it costs per request moves with how the requests arrive).

| load generator | whole run: requests/s (median) | CPU µs/request | steady: requests/s | CPU µs/request | server CPU µs/request | connections |
|---|---:|---:|---:|---:|---:|---:|
${row(`autocannon, ${CONNECTIONS} connections`, runs.autocannon)}
${row("coord's connections alone (the floor of coord's client)", runs.conn)}
${row("undici's Client alone, same loop", runs.undici)}
${row('coord, one worker (in process, embedded backend), metrics on', runs.on)}
${row('coord, one worker, metrics off', runs.off)}
| **processes apart** (the orchestrator in the bench's process, on Redis) | | | | | | |
${row(`autocannon in its own process, ${CONNECTIONS} connections`, workerRuns.autocannon)}
${row('coord, 1 worker process (`coord run --plugin load-test --role worker`)', workerRuns.one)}
${row('coord, 2 worker processes (CPU: both)', workerRuns.two)}

| comparison (median of the rounds' ratios; middle half) | whole run | steady | goal |
|---|---|---|---|
| one worker process vs autocannon's process, requests/s | **${pairedRatio(workerRuns.one, workerRuns.autocannon).toFixed(2)}×** (${spread(workerRuns.one, workerRuns.autocannon)}) | **${pairedRatio(workerRuns.one, workerRuns.autocannon, 'rps', true).toFixed(2)}×** (${spread(workerRuns.one, workerRuns.autocannon, 'rps', true)}) | ≥ 1.0× |
| one worker process vs autocannon's process, CPU per request | ${pairedRatio(workerRuns.one, workerRuns.autocannon, 'cpuUs').toFixed(2)}× (${spread(workerRuns.one, workerRuns.autocannon, 'cpuUs')}) | ${pairedRatio(workerRuns.one, workerRuns.autocannon, 'cpuUs', true).toFixed(2)}× (${spread(workerRuns.one, workerRuns.autocannon, 'cpuUs', true)}) | |
| one worker process vs autocannon's process, **requests per CPU-second** (autocannon's CPU per request over the worker's) | ${perCpu(workerRuns.one, workerRuns.autocannon)} | | ≥ 1.0× |
| all in one process (\`coord load run\`'s shape: orchestrator, embedded backend, worker) vs autocannon in that process, requests/s | **${onVsAc.toFixed(2)}×** (${spread(runs.on, runs.autocannon)}) | **${onVsAcSteady.toFixed(2)}×** (${spread(runs.on, runs.autocannon, 'rps', true)}) | (per CPU-second: \`coord load run\` below) |
| all in one process vs autocannon in it, CPU per request | ${cpuOnVsAc.toFixed(2)}× (${spread(runs.on, runs.autocannon, 'cpuUs')}) | ${cpuOnVsAcSteady.toFixed(2)}× (${spread(runs.on, runs.autocannon, 'cpuUs', true)}) | |
| coord's connections alone vs autocannon, requests/s | ${connVsAc.toFixed(2)}× | ${connVsAcSteady.toFixed(2)}× | |
| coord's connections alone vs undici's Client alone, CPU per request | ${pairedRatio(runs.conn, runs.undici, 'cpuUs').toFixed(2)}× (${spread(runs.conn, runs.undici, 'cpuUs')}) | ${pairedRatio(runs.conn, runs.undici, 'cpuUs', true).toFixed(2)}× | |
| coord vs its connections alone, requests/s | ${onVsConn.toFixed(2)}× | ${pairedRatio(runs.on, runs.conn, 'rps', true).toFixed(2)}× | |
| metrics on vs off, requests/s | ${onVsOff.toFixed(3)}× (${((1 - onVsOff) * 100).toFixed(1)}% drop) | ${onVsOffSteady.toFixed(3)}× (${((1 - onVsOffSteady) * 100).toFixed(1)}% drop) | ≤ 5% drop |
| metrics on vs off, CPU per request | ${cpuOnVsOff.toFixed(3)}× | ${pairedRatio(runs.on, runs.off, 'cpuUs', true).toFixed(3)}× | |
| metrics alone (record, flush, merge, result) at ${fmt(rps(runs.on))} requests/s: ${metricsPath.toFixed(2)} CPU µs/request | ${((metricsPath / cpu(runs.on)) * 100).toFixed(1)}% of coord's CPU per request: the drop when the client's CPU is the limit | | ≤ 5% drop |
| 2 worker processes vs 1, on Redis, requests/s | ${twoVsOne.toFixed(2)}× | | |

Runs (whole-run requests/s, in round order): autocannon ${list(runs.autocannon)}; connections alone ${list(runs.conn)}; undici alone ${list(runs.undici)}; metrics on ${list(runs.on)}; off ${list(runs.off)};
autocannon's process ${list(workerRuns.autocannon)}; 1 worker ${list(workerRuns.one)}; 2 workers ${list(workerRuns.two)}.
Steady requests/s: autocannon ${list(steadyOf(runs.autocannon))}; connections alone ${list(steadyOf(runs.conn))}; undici alone ${list(steadyOf(runs.undici))}; metrics on ${list(steadyOf(runs.on))}; off ${list(steadyOf(runs.off))};
autocannon's process ${list(steadyOf(workerRuns.autocannon))}; 1 worker ${list(steadyOf(workerRuns.one))}; 2 workers ${list(steadyOf(workerRuns.two))}.
Whole-run CPU µs/request: autocannon ${list(runs.autocannon, 'cpuUs')}; connections alone ${list(runs.conn, 'cpuUs')}; undici alone ${list(runs.undici, 'cpuUs')}; metrics on ${list(runs.on, 'cpuUs')}; off ${list(runs.off, 'cpuUs')}.`;
}

const sections = [];
if (wants('startup')) sections.push(`## Start-up: the first request, and its cost\n\n${await startupReport(target, STARTUP_ROUNDS)}`);
if (wants('whole')) sections.push(await wholeSection());
if (wants('cli')) sections.push(await cliSection());
if (wants('throughput')) sections.push(await throughputSection());
if (wants('memory')) sections.push(`## Memory beside Locust\n\n${await memoryReport(target)}`);
stopServer();
const text = `# load-test's cost beside autocannon's and Locust's

\`${ONLY ? `LOAD_BENCH_ONLY=${ONLY.join(',')} ` : ''}node bench/load.mjs\` — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ${CORES} cores (${cpus()[0]?.model ?? '?'}).
Load average (1, 5, 15 min) before the bench: ${loadBefore}; after: ${load()}. Each section gives the load its runs ran at.

${sections.join('\n')}`;
if (!ONLY) writeFileSync(join(here, 'results/load.md'), text);
else if (ONLY.join() === 'cli') writeFileSync(join(here, 'results/load-cli.md'), text);
console.log(text);
process.exit(0);
