// webdriver at 10, 100 and 1,000 slots (bench/scale.mjs runs it): 5 slots per
// orchestrator (2, 20, 200 orchestrators) and 5 requests queued per slot (50,
// 500, 5,000), as issue 34 asks. A real proxy and a real manager run as coord
// processes of their own; the orchestrators and their nodes are simulated in
// this process (bench/scale/webdriver-fleet.mjs: what the real ones write,
// through the plugin's scripts, no browsers). Clients are real W3C New
// Session requests over HTTP to the proxy (undici). Each round runs a size
// twice, the second time with SLOWLOG at 0 µs:
//  1. the fleet registers: used_memory before and after, per slot;
//  2. as many requests as slots are served, and their clients hold them;
//  3. five times as many are queued behind them: Redis's CPU per queued
//     request and used_memory per queued request, once every one of them is
//     in sessions.active; the manager's and the proxy's Redis connections
//     (CLIENT LIST) with the queue full;
//  4. the held sessions are ended (DELETE /session) and each client that gets
//     a session ends it at once, so the slots turn until the queue is empty:
//     Redis's CPU per session served (allocation to release, every command of
//     the grid's and the fleet's in that time), the time to drain the queue,
//     the connections (sampled from /proc throughout);
//  5. (the logged run) from SLOWLOG, the order in which the sessions were
//     queued (queueSession) and given slots (allocateSlot): an allocation
//     while a session queued before it still waited is out of order.
// The orchestrators are removed after each run, and the ended sessions purged.
// SCALE_SIZES=10,100 runs only those sizes (a quick look); SCALE_STATS=1 prints what each
// command cost Redis per session over each drain (INFO commandstats), to stderr.
import { loadScriptDir } from '../../dist/core/scripts.js';
import { scenarioContext } from '../../dist/conformance/scenario-context.js';
import plugin from '../../dist/plugins/webdriver/index.js';
import { purgeSession } from '../../dist/plugins/webdriver/scripts.js';
import { coord } from '../../dist/test/support/cli.js';
import { freePort } from '../../dist/test/support/redis.js';
import { Agent } from 'undici';
import { commandStats, connectionsTo, controlCost, forget, killOnExit, loadScripts, logEveryCall, logNoCall, processCpuMs, redisClientsOf, redisCost, scriptCalls, sleep, usedMemory } from './kit.mjs';
import { Nodes, Orchestrator } from './webdriver-fleet.mjs';

const PREFIX = '{scale}:';
const SLOTS_PER_ORCHESTRATOR = 5;
const QUEUED_PER_SLOT = 5;
const body = JSON.stringify({ capabilities: { alwaysMatch: { browserName: 'chrome' }, firstMatch: [{}] } });

/** The script calls logged since the last read (kit's scriptCalls: in the order Redis ran them), each with the session it names. */
async function takeSlowlog(backend, names, into) {
  for (const c of await scriptCalls(backend, names)) into.push({ script: c.script, ms: c.ms, sessionId: /session:([0-9a-f-]{36}):/.exec(c.args.slice(3).join(' '))?.[1] });
}

/** Allocations made while a session queued before the allocated one still waited (queued, neither allocated nor ended). */
function outOfOrder(calls) {
  const waiting = new Map(); // session → its place in the queue (insertion order is queue order)
  let late = 0;
  for (const c of calls) {
    if (c.script === 'queueSession') waiting.set(c.sessionId, true);
    else if (c.script === 'allocateSlot' && waiting.has(c.sessionId)) {
      if (waiting.keys().next().value !== c.sessionId) late++;
      waiting.delete(c.sessionId);
    } else if (c.script === 'terminateSession') waiting.delete(c.sessionId);
  }
  return late;
}

/** Requests the proxy refused with 429 (slow heads) and their clients sent again, over the bench. */
let refusedHeads = 0;

/**
 * fetch, asked again when the proxy refuses it (429) for a burst of connections whose heads it has not read within
 * 1 s: on a loaded machine the bench's own process writes 1,000 heads too slowly. Nothing reached Redis then (the
 * refused connection may also be reset as undici reuses it).
 */
async function send(url, init) {
  for (let tries = 0; ; tries++) {
    const res = await fetch(url, init).catch((error) => {
      if (tries === 20 || error.cause?.code !== 'ECONNRESET') throw error;
      return undefined;
    });
    if (res && (res.status !== 429 || tries === 20)) return res;
    await res?.arrayBuffer();
    refusedHeads++;
    await sleep(200 + Math.random() * 800);
  }
}

/** A client: asks for a session through the proxy; once it has one (and `hold` has resolved), ends it. Resolves when it has. */
async function client(base, dispatcher, served, hold) {
  const res = await send(`${base}/session`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher });
  const { value } = await res.json();
  if (res.status !== 200) throw new Error(`New Session: ${res.status} ${value.error}: ${value.message}`);
  served();
  await hold;
  const ended = await send(`${base}/session/${value.sessionId}`, { method: 'DELETE', dispatcher });
  const text = await ended.text();
  if (ended.status !== 200) throw new Error(`DELETE /session: ${ended.status} ${text.slice(0, 300)}`);
}

async function until(what, test, ms) {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`not within ${ms / 1000} s: ${what}`);
    await sleep(50);
  }
}

/** One run at `size` slots: the measures of steps 1–4, and with `logged` the script calls of steps 2–4. */
async function run(s, size, logged) {
  const { ctx, backend, nodes, base, names } = s;
  const values = {};
  const queued = size * QUEUED_PER_SLOT;
  const pids = { manager: s.manager.child.pid, proxy: s.proxy.child.pid };
  const connections = async () => ({ manager: await redisClientsOf(backend, pids.manager), proxy: await redisClientsOf(backend, pids.proxy) });
  const run = randomTag();
  const refused0 = refusedHeads;

  // 1. the fleet
  const fleet = Array.from({ length: size / SLOTS_PER_ORCHESTRATOR }, (_, i) => new Orchestrator(ctx, nodes, `sim-${run}-${i}`, SLOTS_PER_ORCHESTRATOR));
  const before = await usedMemory(backend);
  for (const o of fleet) await o.register();
  const registered = await usedMemory(backend);
  for (const o of fleet) await o.start();
  values.memorySlot = (registered.used - before.used) / size;
  values.datasetSlot = (registered.dataset - before.dataset) / size;
  const idle = await connections();
  await sleep(1500); // the manager's shared read of the live orchestrators (once a second) sees them all

  const calls = [];
  let reading;
  let lastRead = Promise.resolve();
  if (logged) {
    await logEveryCall(backend);
    // one read at a time, the last one awaited before the calls are counted
    reading = setInterval(() => (lastRead = lastRead.then(() => takeSlowlog(backend, names, calls)).catch((error) => console.error(`SLOWLOG: ${error.message}`))), 250);
  }
  const dispatcher = new Agent({ connections: null, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 60_000 });
  let release;
  const hold = new Promise((resolve) => (release = resolve));
  let served = 0;
  const count = () => served++;
  const active = async () => Number(await backend.send(['SCARD', ctx.keys.sessionsActive()]));

  // 2. every slot taken, held
  const holders = Array.from({ length: size }, () => client(base, dispatcher, count, hold));
  await until(`${size} sessions served`, async () => served === size, 120_000);

  // 3. the queue
  // (usedMemory empties the slow log: the logged run's memory is not read)
  const memory = () => (logged ? { used: 0, dataset: 0 } : usedMemory(backend));
  const queueFrom = await memory();
  let waiters;
  const queue = await redisCost(backend, async () => {
    waiters = Array.from({ length: queued }, () => client(base, dispatcher, count, undefined));
    await until(`${queued} requests queued`, async () => (await active()) === size + queued, 300_000);
    await sleep(1000); // the last ones' match (the live orchestrators read) and their wait begun
    return queued;
  });
  const full = await memory();
  values.memoryQueued = (full.used - queueFrom.used) / queued;
  values.datasetQueued = (full.dataset - queueFrom.dataset) / queued;
  values.queueCpu = queue.cpuUs;
  const queuedConnections = await connections();

  // 4. the drain
  // (the logged run's SLOWLOG would hold the control's calls too: it is measured in the other run)
  const unit0 = logged ? 1 : await controlCost(backend);
  const most = { manager: 0, proxy: 0 };
  const sampler = setInterval(() => {
    try {
      for (const [name, pid] of Object.entries(pids)) most[name] = Math.max(most[name], connectionsTo(pid, s.redisPort));
    } catch {} // a process that ended: its exit says why
  }, 250);
  const managerCpu0 = processCpuMs(pids.manager);
  const proxyCpu0 = processCpuMs(pids.proxy);
  const benchCpu0 = processCpuMs(process.pid);
  const began = Date.now();
  const stats0 = process.env.SCALE_STATS ? await commandStats(backend) : undefined;
  const drain = await redisCost(backend, async () => {
    release();
    await Promise.all([...holders, ...waiters]);
    return queued;
  });
  if (stats0) printStats(size, stats0, await commandStats(backend), queued);
  const drainMs = Date.now() - began;
  values.managerCpu = (100 * (processCpuMs(pids.manager) - managerCpu0)) / drainMs;
  values.proxyCpu = (100 * (processCpuMs(pids.proxy) - proxyCpu0)) / drainMs;
  values.benchCpu = (100 * (processCpuMs(process.pid) - benchCpu0)) / drainMs;
  clearInterval(sampler);
  const unit = logged ? 1 : (unit0 + (await controlCost(backend))) / 2;
  await until('every session ended', async () => (await active()) === 0, 60_000);
  const after = await connections();
  Object.assign(values, {
    cpu: drain.cpuUs, units: drain.cpuUs / unit, queueUnits: queue.cpuUs / unit, unit,
    drain: drainMs / 1000, rate: queued / (drainMs / 1000), retried: refusedHeads - refused0,
    managerConnections: Math.max(idle.manager, queuedConnections.manager, after.manager, most.manager),
    proxyConnections: Math.max(idle.proxy, queuedConnections.proxy, after.proxy, most.proxy),
  });
  if (logged) {
    clearInterval(reading);
    await lastRead;
    await takeSlowlog(backend, names, calls);
    await logNoCall(backend);
    values.outOfOrder = outOfOrder(calls);
    values.allocations = calls.filter((c) => c.script === 'allocateSlot').length;
  }
  await dispatcher.close();

  // what is left: the fleet, and the ended sessions (gc would purge them)
  for (const o of fleet) await o.stop();
  for (const sessionId of await backend.send(['SMEMBERS', ctx.keys.sessionsTerminated()])) await purgeSession(ctx, sessionId);
  return { values, calls: calls.map(({ script, ms }) => ({ script, ms })) };
}

/** SCALE_STATS=1: what each command cost Redis over the drain, per session served (INFO commandstats), to stderr. */
function printStats(size, before, after, sessions) {
  const rows = Object.entries(after)
    .map(([command, { calls, usec }]) => ({ command, calls: (calls - (before[command]?.calls ?? 0)) / sessions, usec: (usec - (before[command]?.usec ?? 0)) / sessions }))
    .filter((r) => r.calls > 0)
    .sort((a, b) => b.usec - a.usec);
  console.error(`commandstats over the drain at ${size} slots, per session: ${rows.map((r) => `${r.command} ${r.calls.toFixed(2)} calls ${r.usec.toFixed(1)} µs`).join('; ')}`);
}

const randomTag = () => Math.random().toString(36).slice(2, 8);

export default {
  unit: 'slot',
  // SCALE_SIZES=10,100 runs some of them (a quick look; the report's ratios need the first)
  sizes: process.env.SCALE_SIZES ? process.env.SCALE_SIZES.split(',').map(Number) : [10, 100, 1000],
  measures: [
    { key: 'cpu', label: 'Redis CPU per session served from the queue: allocation to release, everything Redis did meanwhile', unit: 'µs', target: { flat: 1.5 } },
    { key: 'units', label: 'session ÷ control (Redis CPU, in calls of the control)', unit: 'controls', digits: 2, target: { flat: 1.5 } },
    { key: 'queueCpu', label: 'Redis CPU per request queued: queueSession, the manager\'s match of the live orchestrators', unit: 'µs', target: { flat: 1.5 } },
    { key: 'queueUnits', label: 'queued request ÷ control', unit: 'controls', digits: 2, target: { flat: 1.5 } },
    { key: 'unit', label: 'the control: Redis CPU per call of a fixed-work Lua loop (2,000 iterations), before and after the drain', unit: 'µs' },
    { key: 'outOfOrder', label: 'allocations out of queue order (SLOWLOG: allocateSlot while an earlier-queued session waited)', unit: 'allocations', digits: 0, target: { max: 0 } },
    { key: 'allocations', label: 'allocations logged', unit: 'allocations', digits: 0 },
    { key: 'managerConnections', label: "the manager's Redis connections, most seen (CLIENT LIST idle, queue full, after; /proc while draining)", unit: 'connections', digits: 0, target: { flat: 1 } },
    { key: 'proxyConnections', label: "the proxy's Redis connections, most seen", unit: 'connections', digits: 0, target: { flat: 1 } },
    { key: 'drain', label: 'time to drain the queue (the held sessions ended, then every queued request served and ended)', unit: 's', digits: 2 },
    { key: 'rate', label: 'sessions served a second while draining', unit: 'sessions/s', digits: 0 },
    { key: 'retried', label: 'requests refused by the proxy (429: 256 heads unread after 1 s, the bench process too slow to write them) and sent again', unit: 'requests', digits: 0 },
    { key: 'managerCpu', label: "the manager process's CPU while draining", unit: '% of a core', digits: 0 },
    { key: 'proxyCpu', label: "the proxy process's CPU while draining", unit: '% of a core', digits: 0 },
    { key: 'benchCpu', label: 'this process (clients and the simulated fleet) while draining', unit: '% of a core', digits: 0 },
    { key: 'memorySlot', label: 'Redis memory per slot: used_memory delta of the fleet registering / slots', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'datasetSlot', label: 'the data alone per slot: used_memory_dataset delta / slots (without the server\'s overhead)', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'memoryQueued', label: 'Redis memory per queued request: used_memory delta of the queue / requests', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'datasetQueued', label: 'the data alone per queued request: used_memory_dataset delta / requests', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
  ],
  loggedCalls: 'of the logged run of each size (steps 2–4: sessions served, queued, drained; every script the manager, the proxy and the simulated fleet called)',

  async setup({ redis, backend, log }) {
    const ctx = scenarioContext({ plugin, backend, keyPrefix: PREFIX, signal: new AbortController().signal });
    const names = await loadScripts(backend, loadScriptDir(plugin.scripts, plugin.contract));
    const nodes = new Nodes(ctx);
    await nodes.listen();
    const port = await freePort();
    const common = ['run', '--plugin', 'webdriver', '--redis', redis.url, '--prefix', PREFIX];
    const proxy = coord([...common, '--role', 'proxy', '--set', `webdriver.proxy.port=${port}`]);
    const manager = coord([...common, '--role', 'manager']);
    for (const p of [proxy, manager]) killOnExit(p.child.pid, true);
    const state = { stopping: false };
    // one of them ending mid-run ends the bench, saying why
    for (const [name, p] of Object.entries({ proxy, manager })) {
      void p.exited.then((code) => {
        if (state.stopping) return;
        console.error(`the ${name} exited (${code}): ${p.stderr().slice(-3000)}`);
        process.exit(1);
      });
    }
    await proxy.waitFor((l) => l.msg === 'ready', 60_000);
    await manager.waitFor((l) => l.msg === 'ready', 60_000);
    log(`proxy on port ${port} and manager ready; simulated nodes on port ${nodes.port}`);
    return { state, ctx, backend, log, names, nodes, proxy, manager, base: `http://127.0.0.1:${port}`, redisPort: Number(new URL(redis.url).port) };
  },

  async round(s, size) {
    const measured = await run(s, size, false);
    s.log(`  measured run done (${size} slots); the logged run`);
    const logged = await run(s, size, true);
    return { values: { ...measured.values, outOfOrder: logged.values.outOfOrder, allocations: logged.values.allocations }, calls: logged.calls };
  },

  async teardown(s) {
    if (!s) return;
    s.state.stopping = true;
    // what the processes warned of (SCALE_DEBUG=1)
    if (process.env.SCALE_DEBUG) for (const p of [s.proxy, s.manager]) for (const l of p.lines.filter((l) => Number(l.level) >= 40 || /warn|error/.test(String(l.level))).slice(0, 5)) console.error(JSON.stringify(l));
    for (const p of [s.proxy, s.manager]) {
      p.kill('SIGTERM');
      await Promise.race([p.exited, sleep(10_000)]);
      p.kill('SIGKILL');
      forget(p.child.pid);
    }
    await s.nodes.close();
  },

  describe() {
    return [
      `Slots: ${SLOTS_PER_ORCHESTRATOR} per simulated orchestrator; ${QUEUED_PER_SLOT} New Session requests queued per slot behind as many held sessions.`,
      'A real proxy (`coord run --plugin webdriver --role proxy`) and a real manager (`--role manager`), default settings (heartbeat 10 s,',
      'queue timeout 300 s), processes of their own on the same redis-server. The orchestrators and their nodes are simulated in the bench',
      'process (bench/scale/webdriver-fleet.mjs): each orchestrator registers and beats with registerOrchestrator, takes its backlog into',
      'pending (BRPOPLPUSH) and recycles reclaimed slots (BLMOVE, then announceSlot to the managers) on two blocking connections of its own, schedules with scheduleSession;',
      'each node logs BOOT, DSTART, DALIVE, LSINIT, beats, writes capabilities.actual, then upstream and ready in one MULTI, answers the',
      "manager's /status and the proxy's DELETE /session (terminateSession, HALT), as a node with a warm chromedriver does, no browser.",
      'Clients: W3C New Session over HTTP to the proxy (undici, one connection each); a client that has its session ends it at once; one the proxy refuses with 429 (slow heads) asks again.',
      "Redis CPU: the redis-server main thread's CPU (INFO cpu) over the queueing (per request queued) and over the drain (per session",
      'served from the queue: every command of the grid and the fleet meanwhile, heartbeats included), with SLOWLOG off; divided by a',
      'fixed-work Lua loop measured before and after the drain. Connections: CLIENT LIST entries whose ports are the process\'s sockets',
      '(idle, queue full, after), and the same from /proc every 250 ms while draining. Order: a second run of each size with SLOWLOG',
      'at 0 µs, read every 250 ms (GET and RESET in one MULTI, one read at a time): queueSession and allocateSlot calls in the order Redis ran them.',
    ].join('\n');
  },
};
