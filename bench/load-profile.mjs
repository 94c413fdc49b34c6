// A small driver for profiling load-test's per-request path: one local server
// (bench/load-server.mjs, its own process), coord's orchestrator and one worker
// in this process (embedded backend, as `coord load run`), the bench's
// scenario; prints requests/s and this process's CPU µs per request per run,
// with `autocannon` as an argument the same for autocannon, and with `raw` for
// a bare loop on undici's dispatch (the pool coord makes, one callback per
// response, nothing else): the floor of what coord's client can cost.
// With PROFILE=file.cpuprofile, each measured run (not the warm-up) is
// profiled into file-<coord|autocannon|raw>-<round>.cpuprofile, with the
// number of requests the server saw as `requests` (open them in Chrome's
// DevTools).
//   npx tsc -p . && PROFILE=/tmp/coord.cpuprofile node bench/load-profile.mjs [seconds] [runs] [autocannon] [raw]
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import autocannon from 'autocannon';
import { loadConfig } from '../dist/core/config.js';
import { startProcess } from '../dist/core/runtime.js';
import { HttpDispatchers } from '../dist/plugins/load-test/http-client.js';
import plugin from '../dist/plugins/load-test/index.js';
import { controllerOf } from '../dist/plugins/load-test/roles/orchestrator.js';

const here = dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 50;
const seconds = Number(process.argv[2] ?? 5);
const runs = Number(process.argv[3] ?? 3);
const withAutocannon = process.argv.includes('autocannon');
const withRaw = process.argv.includes('raw');

const server = fork(join(here, 'load-server.mjs'));
const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.port)));
const url = `http://127.0.0.1:${port}`;
const served = () =>
  new Promise((resolve) => {
    server.once('message', (m) => resolve(m.count));
    server.send({ type: 'count' });
  });
const results = {};
async function measure(name, run) {
  const before = await served();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const s = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const requests = (await served()) - before;
  (results[name] ??= []).push((used.user + used.system) / requests);
  console.log(`${name}: ${Math.round(requests / s)} req/s, ${((used.user + used.system) / requests).toFixed(1)} CPU µs/request, ${s.toFixed(2)} s`);
  return requests;
}

const flags = [
  { path: 'load-test.api', value: false },
  { path: 'load-test.connections', value: CONNECTIONS },
  { path: 'log.level', value: 'warn' },
  { path: 'roles', value: ['worker', 'orchestrator'] },
];
const local = await startProcess({ plugins: [plugin], config: loadConfig({ plugins: [plugin], env: {}, flags }) });
const controller = controllerOf(local.signal);
const coordRun = (secs) => async () => {
  const { finished } = await controller.start({
    scenario: join(here, 'load-scenario.mjs'), users: CONNECTIONS, spawnRate: 100_000, durationMs: secs * 1000, params: { baseUrl: url }, metrics: true,
  });
  await finished;
};
const autocannonRun = (secs) => () => autocannon({ url, connections: CONNECTIONS, duration: secs });
const rawRun = (secs) => () =>
  new Promise((resolve) => {
    const dispatchers = new HttpDispatchers(url, CONNECTIONS);
    const pool = dispatchers.for(url);
    const options = { origin: url, path: '/', method: 'GET', blocking: false };
    const end = performance.now() + secs * 1000;
    let running = CONNECTIONS;
    const next = () => {
      if (performance.now() < end) pool.dispatch(options, handler());
      else if (--running === 0) dispatchers.close().then(resolve);
    };
    const handler = () => ({ onConnect() {}, onHeaders: () => true, onData: () => true, onComplete: next, onError: next });
    for (let i = 0; i < CONNECTIONS; i++) next();
  });

const profile = process.env.PROFILE;
const session = new Session();
if (profile) {
  session.connect();
  await session.post('Profiler.enable');
}
/** Measures a run; with PROFILE, profiles it into <PROFILE without .cpuprofile>-<name>-<round>.cpuprofile. */
async function profiled(name, run, round) {
  if (profile) await session.post('Profiler.start');
  const requests = await measure(name, run);
  if (!profile) return;
  const { profile: p } = await session.post('Profiler.stop');
  writeFileSync(profile.replace(/(\.cpuprofile)?$/, `-${name}-${round + 1}.cpuprofile`), JSON.stringify({ ...p, requests }));
}
await measure('coord warm-up', coordRun(2));
for (let i = 0; i < runs; i++) {
  if (withAutocannon) await profiled('autocannon', autocannonRun(seconds), i);
  if (withRaw) await profiled('raw', rawRun(seconds), i);
  await profiled('coord', coordRun(seconds), i);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
for (const [name, xs] of Object.entries(results)) console.log(`${name}: CPU µs/request min ${Math.min(...xs).toFixed(1)}, median ${med(xs).toFixed(1)}`);
await local.stop('profile');
server.kill();
process.exit(0);
