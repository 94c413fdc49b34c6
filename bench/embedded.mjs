// The embedded backend against a loopback redis-server through ioredis, in one run.
//
// 1. Per plugin script: every plugin's conformance scenarios run ROUNDS times on
//    each backend (after one warm-up round); each script call is timed where the
//    backend is called, and the median per script is compared.
// 2. Scale: browser-grid selectWorker and touchWorker at 10 and 1000 workers, and
//    load-test starting 10,000 users, on both; wall clock and CPU time (which a
//    loaded machine inflates less).
//
//   npx tsc -p . && node bench/embedded.mjs        (BENCH_ROUNDS=10 for more rounds; 5 by default)
//
// Prints the tables and writes them to bench/results/embedded.md.
import { writeFileSync } from 'node:fs';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import browserGrid from '../dist/plugins/browser-grid/index.js';
import loadTest from '../dist/plugins/load-test/index.js';
import obniz from '../dist/plugins/obniz/index.js';
import webdriver from '../dist/plugins/webdriver/index.js';
import { startRedis } from '../dist/test/support/redis.js';
import { processesCpuUs } from './proc-cpu.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const plugins = [browserGrid, webdriver, loadTest, obniz];
const redis = await startRedis();
// A crash anywhere below still stops the redis-server started here (it would outlive this process otherwise).
process.on('uncaughtException', async (error) => {
  console.error(error);
  await redis.stop(true);
  process.exit(1);
});
const backends = { embedded: () => createBackend({}), redis: () => createBackend({ url: redis.url, adapter: 'ioredis' }) };

/** µs per call, by backend, by script name. */
const calls = { embedded: new Map(), redis: new Map() };

/** The backend with its script calls timed into `into`, by plugin/script. */
function timed(backend, into, pluginName) {
  const evalScript = backend.evalScript.bind(backend);
  backend.evalScript = async (script, keys, args) => {
    const start = performance.now();
    try {
      return await evalScript(script, keys, args);
    } finally {
      const name = `${pluginName}/${script.name}`;
      const list = into.get(name) ?? [];
      list.push((performance.now() - start) * 1000);
      into.set(name, list);
    }
  };
  return backend;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

// Round 0 warms up (scripts loaded and compiled, code paths optimised) and is not counted.
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, make] of Object.entries(backends)) {
    for (const plugin of plugins) {
      for (const scenario of typeof plugin.scenarios === 'function' ? await plugin.scenarios() : (plugin.scenarios ?? [])) {
        const backend = timed(await make(), round === 0 ? new Map() : calls[name], plugin.name);
        const controller = new AbortController();
        const keyPrefix = `{bench-${round}-${Math.random().toString(36).slice(2, 10)}}:`;
        try {
          await backend.ready();
          await scenario.run(scenarioContext({ plugin, backend, keyPrefix, signal: controller.signal }));
        } catch (error) {
          console.error(`${plugin.name} ${scenario.name} on ${name}: ${error.message}`);
        } finally {
          controller.abort();
          await backend.close();
        }
      }
    }
  }
  console.error(round === 0 ? 'warm-up round done' : `round ${round}/${ROUNDS} done`);
}

const scriptRows = [];
for (const plugin of plugins) {
  const definitions = [...new Set([...calls.embedded.keys(), ...calls.redis.keys()])].filter((n) => n.startsWith(`${plugin.name}/`)).sort();
  for (const name of definitions) {
    const e = calls.embedded.get(name) ?? [];
    const r = calls.redis.get(name) ?? [];
    if (!e.length || !r.length) continue;
    scriptRows.push({ name, calls: Math.min(e.length, r.length), embedded: median(e), redis: median(r) });
  }
}

// Scale: a browser grid of N workers; selectWorker and touchWorker one after another.
// The largest limits the browser-grid schema allows: no worker fills up or is drained during the measurement.
const limits = { maxConcurrentSessions: 1_000_000, maxLifetimeSessions: 999_999 };
const gridKeys = (workerId) => ({
  worker: { browserType: 'chromium', workerId }, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' },
});

/** The redis-server's pid (its CPU counts toward a call on Redis), or none for the embedded backend. */
async function serverPids(backend) {
  if (backend.name === 'embedded') return [];
  const info = String(await backend.send(['INFO', 'server']));
  return [Number(/process_id:(\d+)/.exec(info)[1])];
}

/** Wall and CPU µs per call (CPU: this process plus the server's), calls one after another for `seconds`. */
async function perCall(backend, call, seconds = 2) {
  // a second of warm-up: V8 compiles WebAssembly with a baseline tier first and optimises hot functions later
  const warm = performance.now() + 1000;
  for (let i = 0; performance.now() < warm; i++) await call(i);
  const pids = await serverPids(backend);
  let n = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  const serverCpu = processesCpuUs(pids);
  const end = start + seconds * 1000;
  while (performance.now() < end) await call(n++);
  const own = process.cpuUsage(cpu);
  return { wall: ((performance.now() - start) * 1000) / n, cpu: (own.user + own.system + processesCpuUs(pids) - serverCpu) / n };
}

async function gridScale(make, size) {
  const backend = await make();
  const ctx = scenarioContext({ plugin: browserGrid, backend, keyPrefix: `{grid${size}-${Math.random().toString(36).slice(2, 8)}}:`, signal: new AbortController().signal, config: limits });
  const now = Date.now();
  const touch = (workerId) => ctx.scripts.run('touchWorker', {
    keys: gridKeys(workerId),
    args: { ref: `chromium:${workerId}`, nowMs: Date.now(), staleMs: 3_600_000, maxConcurrent: limits.maxConcurrentSessions, maxLifetime: limits.maxLifetimeSessions, ttl: 3600,
      fields: ['id', workerId, 'browserType', 'chromium', 'wsEndpoint', `ws://127.0.0.1:1/${workerId}`, 'status', 'available', 'lastHeartbeat', Date.now()] },
  });
  for (let i = 0; i < size; i++) await touch(`w${i}`);
  const select = await perCall(backend, (i) => ctx.scripts.run('selectWorker', {
    keys: { active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, queue: { browserType: 'chromium', version: 'any' }, leases: { proxyId: 'bench' }, versions: { browserType: 'chromium' } },
    args: { nowMs: now, staleMs: 3_600_000, maxConcurrent: limits.maxConcurrentSessions, maxLifetime: limits.maxLifetimeSessions, connectionId: `c${i}`, ticket: '', exclude: '', version: '', protocol: 'playwright' },
  }));
  const heartbeat = await perCall(backend, (i) => touch(`w${i % size}`));
  await backend.close();
  return { select, heartbeat };
}

// Scale: load-test starts 10,000 users: addUsers assigns them over 4 workers (1000 a call,
// as a ramp step sends them), then each worker marks its users running (markRunning).
async function startUsers(make, users = 10_000, step = 1000) {
  const backend = await make();
  const ctx = scenarioContext({ plugin: loadTest, backend, keyPrefix: `{users-${Math.random().toString(36).slice(2, 8)}}:`, signal: new AbortController().signal });
  const workers = ['w1', 'w2', 'w3', 'w4'];
  await backend.send(['SET', ctx.keys.testState(), 'RUNNING']);
  await backend.send(['SET', ctx.keys.testEpoch(), '1']);
  const pids = await serverPids(backend);
  const cpu = process.cpuUsage();
  const serverCpu = processesCpuUs(pids);
  const start = performance.now();
  const byWorker = new Map(workers.map((w) => [w, []]));
  for (let added = 0; added < users; added += step) {
    const reply = await ctx.scripts.run('addUsers', {
      keys: { users: {}, cursor: {}, state: {}, epoch: {} },
      args: { usersTail: ':users', commandsTail: ':commands', expectEpoch: '1', now: Math.floor(Date.now() / 1000), commandId: `c${added}`, cap: 100_000, count: step, ids: '[]', target: users, workers },
    });
    if (!Array.isArray(reply) || reply[0] === 'err') throw new Error(`addUsers answered ${JSON.stringify(reply).slice(0, 200)}`);
    for (let i = 0; i < reply.length; i += 2) byWorker.get(reply[i + 1]).push(String(reply[i]));
  }
  for (const [workerId, userIds] of byWorker) {
    await ctx.scripts.run('markRunning', {
      keys: { active: { workerId }, users: userIds.map((userId) => ({ userId })) },
      args: { workerId, now: Math.floor(Date.now() / 1000), userIds },
    });
  }
  const ms = performance.now() - start;
  const own = process.cpuUsage(cpu);
  const cpuMs = (own.user + own.system + processesCpuUs(pids) - serverCpu) / 1000;
  const running = await backend.send(['SCARD', ctx.keys.workerActiveUsers({ workerId: 'w1' })]);
  await backend.close();
  if (running !== users / workers.length) throw new Error(`worker w1 runs ${running} users, not ${users / workers.length}`);
  return { wall: ms * 1000, cpu: cpuMs * 1000 };
}

const scale = [];
for (const size of [10, 1000]) {
  const e = await gridScale(backends.embedded, size);
  const r = await gridScale(backends.redis, size);
  scale.push([`browser-grid selectWorker, ${size} workers`, e.select, r.select]);
  scale.push([`browser-grid touchWorker (heartbeat), ${size} workers`, e.heartbeat, r.heartbeat]);
  console.error(`grid of ${size} measured`);
}
let usersNote = '';
try {
  const e = await startUsers(backends.embedded);
  const r = await startUsers(backends.redis);
  scale.push(['load-test: 10,000 users start (addUsers + markRunning, whole run)', e, r]);
} catch (error) {
  usersNote = `\n10,000 users could not start: ${error.message}\n`;
}
await redis.stop();

const ratio = (e, r) => `${(e / r).toFixed(2)}×`;
const tables = [
  `# Embedded backend vs redis-server (ioredis, loopback), ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Per plugin script: median time of one script call from the backend's evalScript, over every call the plugins' conformance scenarios make (${ROUNDS} rounds).`,
  '',
  '| script | calls | embedded | redis | embedded / redis |',
  '|---|---:|---:|---:|---:|',
  ...scriptRows.map((r) => `| ${r.name} | ${r.calls} | ${fmt(r.embedded)} | ${fmt(r.redis)} | ${ratio(r.embedded, r.redis)} |`),
  '',
  'At scale: one call after another, per call (wall clock, and CPU: this process plus, on Redis, the redis-server process).',
  '',
  '| call | embedded wall | redis wall | wall ratio | embedded CPU | redis CPU (client + server) | CPU ratio |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...scale.map(([name, e, r]) => `| ${name} | ${fmt(e.wall)} | ${fmt(r.wall)} | ${ratio(e.wall, r.wall)} | ${fmt(e.cpu)} | ${fmt(r.cpu)} | ${ratio(e.cpu, r.cpu)} |`),
  usersNote,
].join('\n');
writeFileSync(new URL('./results/embedded.md', import.meta.url), `${tables}\n`);
console.log(tables);
