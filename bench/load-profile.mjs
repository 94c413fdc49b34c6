// A small driver for profiling load-test's per-request path: one local server
// (bench/load-server.mjs, its own process), coord's orchestrator and one worker
// in this process (embedded backend, as `coord load run`), the bench's
// scenario; prints requests/s and this process's CPU µs per request per run,
// with `autocannon` as an argument the same for autocannon, and with `raw` for
// a bare loop on coord's own connections (http1-connection.ts, one callback
// per response, nothing else): the floor of what coord's client can cost.
// With PROFILE=file.cpuprofile, each measured run (not the warm-up) is
// profiled into file-<coord|autocannon|raw>-<round>.cpuprofile, with the
// number of requests the server saw as `requests` (open them in Chrome's
// DevTools).
//   npx tsc -p . && PROFILE=/tmp/coord.cpuprofile node bench/load-profile.mjs [seconds] [runs] [autocannon] [raw]
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadConfig } from '../dist/core/config.js';
import { connectBackend } from '../dist/adapters/index.js';
import { startRoles } from '../dist/core/runtime.js';
import plugin from '../dist/plugins/load-test/index.js';
import { autocannonRun, connectionRun, coordRun, startTarget } from './load-runs.mjs';

const seconds = Number(process.argv[2] ?? 5);
const runs = Number(process.argv[3] ?? 3);
const withAutocannon = process.argv.includes('autocannon');
const withRaw = process.argv.includes('raw');

const target = await startTarget();
const { url } = target;
const results = {};
async function measure(name, run) {
  const { requests, seconds: s, rps, cpuUs } = await target.measure(run);
  (results[name] ??= []).push(cpuUs);
  console.log(`${name}: ${Math.round(rps)} req/s, ${cpuUs.toFixed(1)} CPU µs/request, ${s.toFixed(2)} s`);
  return requests;
}

const flags = [
  { path: 'load-test.api', value: false },
  { path: 'load-test.connections', value: 0 }, // each user its own connection (the default)
  { path: 'log.level', value: 'warn' },
  { path: 'roles', value: ['worker', 'orchestrator'] },
];
const local = await startRoles({ plugins: [plugin], backend: connectBackend, config: loadConfig({ plugins: [plugin], env: {}, flags }) });
const controller = local.role('load-test', 'orchestrator').controller;
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
await measure('coord warm-up', coordRun(controller, url, 2));
for (let i = 0; i < runs; i++) {
  if (withAutocannon) await profiled('autocannon', autocannonRun(url, seconds), i);
  if (withRaw) await profiled('raw', connectionRun(url, seconds), i);
  await profiled('coord', coordRun(controller, url, seconds), i);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
for (const [name, xs] of Object.entries(results)) console.log(`${name}: CPU µs/request min ${Math.min(...xs).toFixed(1)}, median ${med(xs).toFixed(1)}`);
await local.stop('profile');
target.stop();
process.exit(0);
