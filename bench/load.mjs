// load-test's throughput, in one run, against one local server (its own process):
//  1. one worker's requests per second vs autocannon with the same number of
//     connections (goal ≥ 1.0×);
//  2. the same worker with metrics recorded vs not recorded (goal ≤ 5% drop);
//  3. two worker processes vs one, on real Redis.
// Requests are counted by the server, so every tool is measured the same way.
// Run: npx tsc -p . && node bench/load.mjs
import { fork } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { loadConfig } from '../dist/core/config.js';
import { startProcess } from '../dist/core/runtime.js';
import plugin from '../dist/plugins/load-test/index.js';
import { controllerOf } from '../dist/plugins/load-test/roles/orchestrator.js';
import { coord } from '../dist/test/support/cli.js';
import { startRedis } from '../dist/test/support/redis.js';

const here = dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 50;
const SECONDS = 5;
const ROUNDS = 5;
const scenario = join(here, 'load-scenario.mjs');

const server = fork(join(here, 'load-server.mjs'));
const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.port)));
const url = `http://127.0.0.1:${port}`;
const served = () =>
  new Promise((resolve) => {
    server.once('message', (m) => resolve(m.count));
    server.send({ type: 'count' });
  });

/** Requests per second the server saw while `run` ran. */
async function measure(run) {
  const before = await served();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  return ((await served()) - before) / seconds;
}

function flags(extra) {
  return [{ path: 'load-test.api', value: false }, { path: 'load-test.connections', value: CONNECTIONS }, { path: 'log.level', value: 'warn' }, ...extra];
}

// One worker and the orchestrator in this process, embedded backend (as `coord load run`).
const local = await startProcess({ plugins: [plugin], config: loadConfig({ plugins: [plugin], env: {}, flags: flags([{ path: 'roles', value: ['worker', 'orchestrator'] }]) }) });
const controller = controllerOf(local.signal);
const coordRun = (metrics, ctl = controller) => async () => {
  const { finished } = await ctl.start({ scenario, users: CONNECTIONS, spawnRate: 100_000, durationMs: SECONDS * 1000, params: { baseUrl: url }, metrics });
  await finished;
};
const autocannonRun = () => autocannon({ url, connections: CONNECTIONS, duration: SECONDS });

// Warm-up: the JIT of the server and of both clients (coord's first seconds are much slower).
for (let i = 0; i < 2; i++) {
  await measure(() => autocannon({ url, connections: CONNECTIONS, duration: 2 }));
  await measure(coordRun(true));
  await measure(coordRun(false));
}
const rows = { autocannon: [], coordOn: [], coordOff: [] };
for (let round = 0; round < ROUNDS; round++) {
  // interleaved, so drift on the machine affects each alike
  rows.autocannon.push(await measure(autocannonRun));
  rows.coordOn.push(await measure(coordRun(true)));
  rows.coordOff.push(await measure(coordRun(false)));
}
await local.stop('bench');

// 1 vs 2 worker processes on real Redis, the orchestrator in this process.
const redis = await startRedis();
const prefix = '{bench}:';
const common = ['--redis', redis.url, '--prefix', prefix, '--set', `load-test.connections=${CONNECTIONS}`];
const remote = await startProcess({
  plugins: [plugin],
  config: loadConfig({ plugins: [plugin], env: {}, flags: flags([{ path: 'roles', value: ['orchestrator'] }, { path: 'redis.url', value: redis.url }, { path: 'redis.keyPrefix', value: prefix }]) }),
});
const remoteController = controllerOf(remote.signal);
const startWorker = async (id) => {
  const p = coord(['run', '--plugin', 'load-test', '--role', 'worker', '--set', `load-test.workerId=${id}`, ...common]);
  await p.waitFor((l) => l.msg === 'worker registered');
  return p;
};
const w1 = await startWorker('w1');
for (let i = 0; i < 2; i++) await measure(coordRun(true, remoteController));
const oneWorker = [];
for (let round = 0; round < ROUNDS; round++) oneWorker.push(await measure(coordRun(true, remoteController)));
const w2 = await startWorker('w2');
for (let i = 0; i < 2; i++) await measure(coordRun(true, remoteController)); // warms the second worker
const twoWorkers = [];
for (let round = 0; round < ROUNDS; round++) twoWorkers.push(await measure(coordRun(true, remoteController)));
await remote.stop('bench');
for (const w of [w1, w2]) w.kill('SIGTERM');
await Promise.all([w1.exited, w2.exited]);
await redis.stop();
server.kill();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const m = Object.fromEntries(Object.entries({ ...rows, oneWorker, twoWorkers }).map(([k, v]) => [k, median(v)]));
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const ratio = (a, b) => (a / b).toFixed(2);
const table = `# load-test throughput

\`node bench/load.mjs\` — ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}).
One local HTTP server (Node, its own process) answers \`ok\`; requests are counted by the server.
${CONNECTIONS} connections (autocannon) = ${CONNECTIONS} users on undici with ${CONNECTIONS} connections (coord), ${SECONDS} s per run,
median of ${ROUNDS} interleaved runs after warm-up runs. The server and the load generators share the machine's cores.

| comparison | requests/s | ratio | goal |
|---|---:|---:|---|
| autocannon, ${CONNECTIONS} connections | ${fmt(m.autocannon)} | 1.00 | |
| coord, one worker (in process, embedded backend), metrics on | ${fmt(m.coordOn)} | ${ratio(m.coordOn, m.autocannon)}× autocannon | ≥ 1.0× |
| coord, one worker, metrics off | ${fmt(m.coordOff)} | metrics on = ${ratio(m.coordOn, m.coordOff)}× off (${((1 - m.coordOn / m.coordOff) * 100).toFixed(1)}% drop) | ≤ 5% drop |
| coord, 1 worker process on Redis | ${fmt(m.oneWorker)} | 1.00 | |
| coord, 2 worker processes on Redis | ${fmt(m.twoWorkers)} | ${ratio(m.twoWorkers, m.oneWorker)}× one worker | |

Runs (requests/s): autocannon ${rows.autocannon.map(fmt).join(', ')}; metrics on ${rows.coordOn.map(fmt).join(', ')}; off ${rows.coordOff.map(fmt).join(', ')};
1 worker ${oneWorker.map(fmt).join(', ')}; 2 workers ${twoWorkers.map(fmt).join(', ')}.
`;
writeFileSync(join(here, 'results/load.md'), table);
console.log(table);
process.exit(0);
