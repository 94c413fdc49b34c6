// load-test at 1, 10 and 100 workers of 100 users each (bench/scale.mjs runs
// it). Every worker is a real one: `coord run --plugin load-test --role worker`
// processes on the bench's redis-server, PER_PROCESS workers to a process
// (load-test.workers, the plugin's own way to run several workers in one
// process: each has its own id, heartbeat, command stream, users' thread and
// metric batches, as a process of its own would; only the process and its
// Redis connection are shared). 100 Node processes would cost this 2-core
// machine ~10 s of CPU to start and their idle event loops, and change nothing
// Redis sees but the number of connections. A real orchestrator (`--role
// orchestrator`, its API and page on) runs the test; the users send GET / to
// the counting target (bench/load-server.mjs, a process of its own) once every
// 5 to 15 s (load-test-scenario.mjs), and this process polls the orchestrator
// once a second as its page does (/api/status, then /api/resources). Per size
// and round:
//  1. the fleet starts and registers (the orchestrator's /api/status shows it
//     all alive): used_memory before and after, per worker;
//  2. a test of 100 users per worker starts (all within 1 s, the default
//     spawn rate), SLOWLOG at 0 µs over its start and ramp;
//  3. once every user runs: used_memory again, per user (the last test's
//     metric stream, which the start deletes, left out); then a window of
//     WINDOW_S seconds with nothing logged: Redis commands (INFO
//     commandstats, every command but the bench's INFO) and Redis CPU per
//     request the target counted, the fleet's and the orchestrator's CPU, and
//     the page's polls timed (GET / once);
//  4. the test stops through the API, SLOWLOG on again: the requests the
//     result counts must be those the target counted, exactly;
//  5. the metric stream's memory per batch, and the fleet stops.
// The control (a fixed-work Lua loop's Redis CPU, kit.mjs) is measured with
// no fleet running, before step 1 and after step 5. SCALE_SIZES=1,10 runs only
// those sizes; SCALE_WINDOW_S sets the window (default 20).
import { join } from 'node:path';
import { keyBuilders } from '../../dist/core/contract.js';
import { loadScriptDir } from '../../dist/core/scripts.js';
import plugin from '../../dist/plugins/load-test/index.js';
import { coord } from '../../dist/test/support/cli.js';
import { freePort } from '../../dist/test/support/redis.js';
import { startCountingServer } from '../load-process-runs.mjs';
import { commandStats, controlCost, forget, killOnExit, loadScripts, logEveryCall, logNoCall, median, processCpuMs, redisCpuUs, scriptCalls, sleep, timed, usedMemory } from './kit.mjs';

const PREFIX = '{scale}:';
const USERS_PER_WORKER = 100;
const PER_PROCESS = 10;
/**
 * HTTP connections a worker's users share (load-test.connections). Each user's own connection would sit idle
 * between its requests 5 to 15 s apart, past the 4 s after which an idle connection is not reused: every request
 * would open a connection, 1,000 a second at 100 workers, and the target's accept queue, not coord, would set the
 * latencies (requests still in flight at the stop's grace period, aborted).
 */
const CONNECTIONS = 10;
const WINDOW_S = Number(process.env.SCALE_WINDOW_S ?? 20);
/** Once every user runs, before the window: their first requests and the first metric batches settle. */
const SETTLE_MS = 3000;
/** Redis's own CPU with no fleet, measured over this long before each round's fleet starts. */
const IDLE_MS = 3000;
const SCENARIO = join(import.meta.dirname, 'load-test-scenario.mjs');
const METRIC = 'GET /';
/** The bench's own commands, left out of the commands per request. */
const BENCH_COMMANDS = new Set(['info', 'slowlog', 'config', 'memory', 'xlen']);

/** All of Redis's commands so far but the bench's own. */
async function commandCount(backend) {
  let n = 0;
  for (const [name, { calls }] of Object.entries(await commandStats(backend))) if (!BENCH_COMMANDS.has(name.split('|')[0])) n += calls;
  return n;
}

/** Polls `until` resolves truthy, every 250 ms, for at most `ms`; throws naming `what`. */
async function until(what, ms, check) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(250);
  }
}

/** POST `path` of the orchestrator's API: the reply's JSON and how long it took (ms). */
async function post(base, path, body = {}) {
  const start = performance.now();
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return { ms: performance.now() - start, json };
}

const status = async (base) => JSON.parse((await timed(`${base}/api/status`)).body);

/** `size` workers in processes of PER_PROCESS, ids `TAG-pN-i`; resolves once the orchestrator sees every one alive. */
async function startFleet(s, size, tag) {
  const processes = [];
  for (let at = 0, p = 1; at < size; at += PER_PROCESS, p++) {
    const workers = Math.min(PER_PROCESS, size - at);
    const sets = { workers, threads: true, workerId: `${tag}-p${p}`, scenario: SCENARIO, connections: CONNECTIONS };
    const proc = coord([...s.common, '--role', 'worker', ...Object.entries(sets).flatMap(([k, v]) => ['--set', `load-test.${k}=${v}`])]);
    killOnExit(proc.child.pid, true);
    processes.push(proc);
  }
  await until(`${size} workers alive`, 300_000, async () => (await status(s.base)).workers.filter((w) => w.alive).length === size);
  return processes;
}

async function stopFleet(s, processes) {
  for (const p of processes) p.kill('SIGTERM');
  for (const p of processes) {
    await Promise.race([p.exited, sleep(15_000)]);
    p.kill('SIGKILL');
    forget(p.child.pid);
  }
  await until('the fleet to leave', 30_000, async () => (await s.backend.send(['SCARD', s.keys.workers()])) === 0);
}

/** Polls as the page does, once a second until `endAt`: GET /api/status then GET /api/resources, each timed. */
async function pagePolls(base, size, endAt) {
  const out = { status: [], statusBytes: 0, resources: [], minAlive: Number.POSITIVE_INFINITY, oldestBeatS: 0 };
  while (Date.now() < endAt) {
    const start = Date.now();
    const a = await timed(`${base}/api/status`);
    out.status.push(a.ms);
    out.statusBytes = a.body.length;
    const seen = JSON.parse(a.body);
    out.minAlive = Math.min(out.minAlive, seen.workers.filter((w) => w.alive).length);
    out.oldestBeatS = Math.max(out.oldestBeatS, ...seen.workers.map((w) => w.lastHeartbeatAgeS ?? 0));
    if (seen.workers.length !== size) throw new Error(`/api/status at ${size} workers lists ${seen.workers.length}`);
    out.resources.push((await timed(`${base}/api/resources`)).ms);
    await sleep(Math.max(0, start + 1000 - Date.now()));
  }
  return out;
}

const fleetCpuMs = (processes) => processes.reduce((sum, p) => sum + processCpuMs(p.child.pid), 0);

export default {
  unit: 'worker',
  // SCALE_SIZES=1,10 runs some of them (a quick look; the report's ratios need the first)
  sizes: process.env.SCALE_SIZES ? process.env.SCALE_SIZES.split(',').map(Number) : [1, 10, 100],
  measures: [
    { key: 'lost', label: 'requests missing from the result: the target counted more than its requests and aborted ones, or fewer than its requests (must be 0)', unit: 'requests', digits: 0, target: { max: 0 } },
    { key: 'aborted', label: 'requests the stop aborted in flight (the target may or may not have seen them)', unit: 'requests', digits: 0 },
    { key: 'errors', label: 'requests that failed (ECONNRESET, timeouts…: they need not reach the target)', unit: 'requests', digits: 0 },
    { key: 'requests', label: 'requests in the test, as the target counted them', unit: 'requests', digits: 0 },
    { key: 'rate', label: 'requests per second per user in the window (10 s pacing: 0.1)', unit: 'req/s', digits: 2 },
    { key: 'commands', label: 'Redis commands per request (commandstats, every command but the bench\'s INFO)', unit: 'commands', digits: 3, target: { flat: 1.5 } },
    { key: 'cpu', label: 'Redis CPU per request (main thread, network included)', unit: 'µs', digits: 2, target: { flat: 1.5 } },
    { key: 'cpuNet', label: "Redis CPU per request above its idle own (serverCron's, measured with no fleet just before)", unit: 'µs', digits: 2, target: { flat: 1.5 } },
    { key: 'idleCpu', label: "Redis's idle CPU (no fleet), per second", unit: 'ms', digits: 2 },
    { key: 'unit', label: 'the control: Redis CPU per call of a fixed-work Lua loop (2,000 iterations), no fleet running, before and after', unit: 'µs' },
    { key: 'units', label: 'Redis CPU per request ÷ control', unit: 'controls', digits: 3, target: { flat: 1.5 } },
    { key: 'fleetCpu', label: "the fleet's CPU per request (worker processes, all threads)", unit: 'µs', digits: 0 },
    { key: 'orchestratorCpu', label: "the orchestrator's CPU in the window (the page polled once a second)", unit: '% of a core' },
    { key: 'status', label: 'GET /api/status, median of the window', unit: 'ms', target: { max: 100 } },
    { key: 'statusMax', label: 'GET /api/status, longest of the window', unit: 'ms' },
    { key: 'statusKb', label: 'GET /api/status, size', unit: 'KB' },
    { key: 'resources', label: 'GET /api/resources, median of the window', unit: 'ms' },
    { key: 'page', label: 'GET / (the page)', unit: 'ms' },
    { key: 'pageKb', label: 'GET / (the page), size', unit: 'KB' },
    { key: 'oldestBeat', label: 'oldest heartbeat the orchestrator showed in the window (deadAfter 5 s)', unit: 's' },
    { key: 'fleetUp', label: 'the fleet started and seen alive by the orchestrator', unit: 's' },
    { key: 'startMs', label: 'POST /api/start (every worker acknowledged start_test)', unit: 'ms', digits: 0 },
    { key: 'rampMs', label: 'from the start answered to every user running (the workers\' active users)', unit: 'ms', digits: 0 },
    { key: 'terminated', label: "users' threads the stop terminated, taken for held by users' code (not heard from for 0.4 s)", unit: 'threads', digits: 0 },
    { key: 'stopMs', label: 'POST /api/stop (users stopped, last batches read)', unit: 'ms', digits: 0 },
    { key: 'memory', label: 'Redis memory per worker registered, idle: used_memory delta / workers', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'dataset', label: 'the same, the data alone: used_memory_dataset delta / workers (without the connections\' buffers)', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'memoryUser', label: 'Redis memory per user while the test runs: used_memory delta (the last test\'s metric stream, which its start deletes, left out) / users', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'datasetUser', label: 'the same, the data alone: used_memory_dataset delta / users', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'batchBytes', label: 'Redis memory per metric batch: MEMORY USAGE of the metric stream / its entries', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'batches', label: 'entries of the metric stream after the test', unit: 'batches', digits: 0 },
  ],
  loggedCalls: "of each test's start and ramp (beginTest, broadcast of start_test, addUsers, the workers' markRunning) and of its stop",

  async setup({ redis, backend, log }) {
    const names = await loadScripts(backend, loadScriptDir(plugin.scripts, plugin.contract));
    const target = await startCountingServer();
    killOnExit(target.pid);
    const port = await freePort();
    const common = ['run', '--plugin', 'load-test', '--redis', redis.url, '--prefix', PREFIX];
    const orchestrator = coord([...common, '--role', 'orchestrator', '--set', `load-test.port=${port}`]);
    killOnExit(orchestrator.child.pid, true);
    await orchestrator.waitFor((l) => l.msg === 'load test API and page', 60_000);
    log(`orchestrator's API on port ${port}; the target at ${target.url}`);
    return { backend, log, names, target, orchestrator, common, base: `http://127.0.0.1:${port}`, keys: keyBuilders(plugin.contract, PREFIX), exact: [], rounds: 0 };
  },

  async round(s, size) {
    const { backend, log, names, target, base } = s;
    const values = {};
    const calls = [];
    const users = size * USERS_PER_WORKER;
    const tag = `s${size}r${++s.rounds}`;

    // 1. the fleet registers
    await logNoCall(backend);
    const unit0 = await controlCost(backend);
    const idle = await usedMemory(backend);
    const cpu0 = await redisCpuUs(backend);
    await sleep(IDLE_MS);
    values.idleCpu = ((await redisCpuUs(backend)) - cpu0) / IDLE_MS; // µs per ms: ms per second
    const upAt = Date.now();
    const fleet = await startFleet(s, size, tag);
    values.fleetUp = (Date.now() - upAt) / 1000;
    await sleep(1500); // every worker's heartbeat written at least once more
    const registered = await usedMemory(backend);
    // the last test's metric stream, which this test's start deletes (else a smaller test after a larger one frees memory)
    const lastStream = Number((await backend.send(['MEMORY', 'USAGE', s.keys.metric({ metricId: METRIC }), 'SAMPLES', '0'])) ?? 0);
    values.memory = (registered.used - idle.used) / size;
    values.dataset = (registered.dataset - idle.dataset) / size;
    log(`  ${size} workers alive after ${values.fleetUp.toFixed(1)} s`);

    try {
      // 2. the test starts; its start and ramp logged
      await target.ask('reset');
      await logEveryCall(backend);
      const started = await post(base, '/api/start', { scenario: SCENARIO, users, params: { baseUrl: target.url } });
      values.startMs = started.ms;
      const runningAt = Date.now();
      await until(`${users} users running`, 120_000, async () => {
        const seen = await status(base);
        return seen.users === users && seen.workers.reduce((n, w) => n + w.active_users, 0) === users;
      });
      values.rampMs = Date.now() - runningAt;
      calls.push(...(await scriptCalls(backend, names)));
      await logNoCall(backend);

      // 3. the window
      await sleep(SETTLE_MS);
      const running = await usedMemory(backend);
      values.memoryUser = (running.used - registered.used + lastStream) / users;
      values.datasetUser = (running.dataset - registered.dataset + lastStream) / users;
      const page = await timed(`${base}/`);
      Object.assign(values, { page: page.ms, pageKb: page.body.length / 1024 });
      const pids = { orchestrator: s.orchestrator.child.pid };
      const before = { commands: await commandCount(backend), cpu: await redisCpuUs(backend), served: (await target.ask('count')).count, fleet: fleetCpuMs(fleet), orchestrator: processCpuMs(pids.orchestrator), at: Date.now() };
      const polls = await pagePolls(base, size, before.at + WINDOW_S * 1000);
      const after = { commands: await commandCount(backend), cpu: await redisCpuUs(backend), served: (await target.ask('count')).count, fleet: fleetCpuMs(fleet), orchestrator: processCpuMs(pids.orchestrator), at: Date.now() };
      const served = after.served - before.served;
      const seconds = (after.at - before.at) / 1000;
      Object.assign(values, {
        rate: served / seconds / users,
        commands: (after.commands - before.commands) / served,
        cpu: (after.cpu - before.cpu) / served,
        cpuNet: (after.cpu - before.cpu - values.idleCpu * 1000 * seconds) / served,
        fleetCpu: ((after.fleet - before.fleet) * 1000) / served,
        orchestratorCpu: (after.orchestrator - before.orchestrator) / seconds / 10,
        status: median(polls.status),
        statusMax: Math.max(...polls.status),
        statusKb: polls.statusBytes / 1024,
        resources: median(polls.resources),
        oldestBeat: polls.oldestBeatS,
      });
      if (polls.minAlive !== size) log(`  the orchestrator saw only ${polls.minAlive} of ${size} workers alive at one poll`);

      // 4. the stop, and the counts
      await logEveryCall(backend);
      const stopped = await post(base, '/api/stop');
      values.stopMs = stopped.ms;
      calls.push(...(await scriptCalls(backend, names)));
      await logNoCall(backend);
      const result = stopped.json;
      const terminated = fleet.flatMap((p) => p.lines.filter((l) => l.msg === "users' code holds their thread: terminating it"));
      values.terminated = terminated.length;
      if (terminated.length) log(`  ${terminated.length} users' threads terminated at the stop, silent for ${terminated.map((l) => l.silentMs).join(', ')} ms`);
      const metric = result.metrics.find((m) => m.name === METRIC) ?? { count: 0, aborted: 0, errors: 0 };
      const counted = (await target.ask('count')).count;
      values.requests = counted;
      values.errors = metric.errors;
      // an aborted request was cut off waiting for its answer: the target may have counted it or not
      values.lost = counted > metric.count + metric.aborted ? counted - metric.count - metric.aborted : counted < metric.count ? metric.count - counted : 0;
      values.aborted = metric.aborted;
      s.exact.push({ size, counted, result: metric.count, aborted: metric.aborted, errors: metric.errors, incomplete: result.incomplete });
      if (values.lost !== 0 || metric.aborted || result.incomplete) log(`  COUNTS DIFFER: the target counted ${counted}, the result ${metric.count} (+${metric.aborted} aborted; ${metric.errors} errors: ${JSON.stringify(result.errors?.slice(0, 5))})${result.incomplete ? `, incomplete: ${JSON.stringify(result.incomplete)}` : ''}`);

      // 5. a metric series' memory
      const stream = s.keys.metric({ metricId: METRIC });
      values.batches = await backend.send(['XLEN', stream]);
      values.batchBytes = (await backend.send(['MEMORY', 'USAGE', stream, 'SAMPLES', '0'])) / values.batches;
    } finally {
      await stopFleet(s, fleet);
    }
    values.unit = (unit0 + (await controlCost(backend))) / 2;
    values.units = values.cpu / values.unit;
    log(`  ${values.requests} requests, ${values.commands.toFixed(3)} commands and ${values.cpu.toFixed(1)} µs of Redis CPU per request; /api/status ${values.status.toFixed(1)} ms`);
    return { values, calls };
  },

  async teardown(s) {
    if (!s) return;
    s.target.stop();
    forget(s.target.pid);
    s.orchestrator.kill('SIGTERM');
    await Promise.race([s.orchestrator.exited, sleep(10_000)]);
    s.orchestrator.kill('SIGKILL');
    forget(s.orchestrator.child.pid);
  },

  describe(s) {
    const exact = s?.exact ?? [];
    const differ = exact.filter((e) => e.counted !== e.result || e.aborted || e.incomplete);
    const lines = [
      `Real workers (\`coord run --plugin load-test --role worker\`, ${PER_PROCESS} workers to a process through load-test.workers, each with its own id,`,
      'heartbeat, command stream, users\' thread and metric batches) and a real orchestrator (`--role orchestrator`, its API and page on),',
      `default settings, on one redis-server; ${USERS_PER_WORKER} users per worker, each sending GET / to a counting target (a Node process of its own)`,
      'once every 5 to 15 s. This process polls the orchestrator once a second as its page does (/api/status, /api/resources).',
      `Per request: over a window of ${WINDOW_S} s once every user runs, Redis's commands (commandstats) and its main thread's CPU`,
      '(INFO cpu) divided by the requests the target counted in it. Memory: used_memory (and used_memory_dataset) after the fleet',
      'registered minus before, per worker; once every user runs minus before the test (the last test\'s metric stream, which a start',
      'deletes, left out), per user; MEMORY USAGE of the metric stream after the test per entry.',
      `Counts: the target's count of the test's requests against the result's (\`${METRIC}\`: requests + aborted) — ${exact.length} tests,`,
      differ.length
        ? `${differ.length} of them NOT exact: ${differ.map((e) => `${e.size} workers: target ${e.counted}, result ${e.result} + ${e.aborted} aborted`).join('; ')}.`
        : `every one exact (${exact.map((e) => e.counted.toLocaleString('en')).join(', ')} requests; ${exact.reduce((n, e) => n + e.errors, 0)} errors).`,
    ];
    return lines.join('\n');
  },
};
