// What bench/load.mjs and bench/load-profile.mjs share: the local server
// (bench/load-server.mjs, its own process, counting requests), a measure of
// one run by the server's count and this process's CPU, and the three kinds
// of run: coord (a test on an orchestrator's controller), autocannon, and
// coord's connections alone (the floor of coord's client), and undici's Client alone.
import { fork, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startCountingServer } from './load-process-runs.mjs';
import { Client } from 'undici';
import { HttpDispatchers } from '../dist/plugins/load-test/clients/http-connections.js';

const here = dirname(fileURLToPath(import.meta.url));
export const CONNECTIONS = 50;
export const scenario = join(here, 'load-scenario.mjs');

/**
 * Starts the server; `measure(run, window)` gives the requests it saw during run(), per second, this process's CPU µs
 * per request, the server's, and the connections the server accepted; with a window [from, to] (seconds after the run
 * started), also `steady`: requests per second and CPU µs per request (both processes) within it, which leaves out
 * each tool's start (connections, and for coord the users' assignment through Redis) and stop.
 */
export async function startTarget() {
  const server = await startCountingServer();
  const served = () => server.ask('count');
  const sample = async (cpu) => ({ at: performance.now(), cpuUs: cpu(), server: await served() });
  const between = (a, b) => {
    const requests = b.server.count - a.server.count;
    return {
      requests,
      seconds: (b.at - a.at) / 1000,
      rps: requests / ((b.at - a.at) / 1000),
      cpuUs: (b.cpuUs - a.cpuUs) / requests,
      serverCpuUs: (b.server.cpuUs - a.server.cpuUs) / requests,
    };
  };
  /** `cpu`: the CPU µs so far of the process that makes the requests (default: this one). */
  async function measure(run, window, cpu = ownCpuUs) {
    const before = await sample(cpu);
    const done = run();
    let steady;
    if (window) {
      await sleep(window[0] * 1000 - (performance.now() - before.at));
      const from = await sample(cpu);
      await sleep(window[1] * 1000 - (performance.now() - before.at));
      steady = between(from, await sample(cpu));
    }
    await done;
    const after = await sample(cpu);
    return { ...between(before, after), connections: after.server.connections - before.server.connections, steady };
  }
  /** Between `from` and `to` resolving (a run's middle, seen from outside it), with `cpu` as in measure(). */
  async function span(from, to, cpu) {
    await from;
    const a = await sample(cpu);
    await to;
    return between(a, await sample(cpu));
  }
  return { ...server, measure, span };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function ownCpuUs() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * autocannon in its own process (bench/load-autocannon.mjs), started and ready: `run()` runs it once, `stop()` ends it.
 * With `workers`, autocannon's --workers (its worker threads, in that process).
 */
export async function autocannonProcess(url, seconds, workers = 0) {
  const child = fork(join(here, 'load-autocannon.mjs'), [url, String(CONNECTIONS), String(seconds), String(workers)]);
  await new Promise((resolve) => child.once('message', resolve));
  const run = () =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send('go');
    });
  return { pid: child.pid, run, stop: () => child.disconnect() };
}

/** A load test of `seconds` on an orchestrator's controller, CONNECTIONS users at once. */
export const coordRun = (controller, url, seconds, metrics = true) => async () => {
  const { finished } = await controller.start({ scenario, users: CONNECTIONS, spawnRate: 100_000, durationMs: seconds * 1000, params: { baseUrl: url }, metrics });
  await finished;
};

export const autocannonRun = (url, seconds) => () => autocannon({ url, connections: CONNECTIONS, duration: seconds });

/**
 * A connection per user and a callback per response sending its next request, no scenario, promise or metrics: with
 * `kind` 'coord', coord's own connections (http1-connection.ts, as with load-test.connections 0): the floor of coord's
 * client; with 'undici', undici's Client, which coord's users' connections were before.
 */
export const connectionRun = (url, seconds, kind = 'coord') => () =>
  new Promise((resolve) => {
    const dispatchers = new HttpDispatchers(url, 0);
    const { origin } = new URL(url);
    const options = { origin, path: '/', method: 'GET', blocking: false };
    const end = performance.now() + seconds * 1000;
    const clients = [];
    let running = CONNECTIONS;
    for (let i = 0; i < CONNECTIONS; i++) {
      const client = kind === 'undici' ? new Client(origin, { keepAliveTimeout: 10_000, pipelining: 1 }) : dispatchers.forUser().take(origin).client;
      clients.push(client);
      const next = () => {
        if (performance.now() < end) client.dispatch(options, { onConnect() {}, onHeaders: () => true, onData: () => true, onComplete: next, onError: next });
        else if (--running === 0) Promise.all([dispatchers.close(), ...clients.map((c) => c.close())]).then(resolve);
      };
      next();
    }
  });

/**
 * `coord load run` as users run it (node dist/bundle/coord.js, embedded backend, its orchestrator and worker in its own
 * process, the progress line on stderr): `running` resolves at its first progress line (node's start, the CLI's
 * modules, the scenario and the test's start are over: the users run), `summarized` when its summary is printed (the
 * test stopped, its last metrics merged), `exited` when it has exited. `args`: more flags (e.g. --workers auto).
 */
export function loadRunProcess(url, seconds, args = []) {
  const cli = join(here, '../dist/bundle/coord.js');
  const child = spawn(process.execPath, [cli, 'load', 'run', '--scenario', scenario, '--users', String(CONNECTIONS), '--duration', `${seconds}s`, '--param', `baseUrl=${url}`, ...args]);
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (c) => (stderr += c));
  child.stdout.on('data', (c) => (stdout += c));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  // A run that exits before it shows what is waited for fails the bench (rather than leaving it waiting).
  const seen = (text, pattern) =>
    new Promise((resolve, reject) => {
      const check = () => pattern.test(text()) && resolve();
      child.stderr.on('data', check);
      child.stdout.on('data', check);
      exited.then((code) => reject(new Error(`coord load run exited (${code}) before ${pattern}: ${stderr.slice(-500)}`)));
    });
  return { pid: child.pid, running: seen(() => stderr, /\[\s+1s\]/), summarized: seen(() => stdout, /^users test/m), exited };
}
