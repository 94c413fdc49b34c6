// What bench/load.mjs and bench/load-profile.mjs share: the local server
// (bench/load-server.mjs, its own process, counting requests), a measure of
// one run by the server's count and this process's CPU, and the three kinds
// of run: coord (a test on an orchestrator's controller), autocannon, and
// undici's dispatch alone on coord's connections (the floor of coord's client).
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { HttpDispatchers } from '../dist/plugins/load-test/http-connections.js';

const here = dirname(fileURLToPath(import.meta.url));
export const CONNECTIONS = 50;
export const scenario = join(here, 'load-scenario.mjs');

/**
 * Starts the server; `measure(run)` gives the requests it saw during run(), per second, this process's CPU µs per
 * request, the server's, and the connections the server accepted.
 */
export async function startTarget() {
  const server = fork(join(here, 'load-server.mjs'));
  const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.port)));
  const served = () =>
    new Promise((resolve) => {
      server.once('message', resolve);
      server.send({ type: 'count' });
    });
  async function measure(run) {
    const before = await served();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const after = await served();
    const requests = after.count - before.count;
    return {
      requests,
      seconds,
      rps: requests / seconds,
      cpuUs: (used.user + used.system) / requests,
      serverCpuUs: (after.cpuUs - before.cpuUs) / requests,
      connections: after.connections - before.connections,
    };
  }
  return { url: `http://127.0.0.1:${port}`, measure, stop: () => server.kill() };
}

/** A load test of `seconds` on an orchestrator's controller, CONNECTIONS users at once. */
export const coordRun = (controller, url, seconds, metrics = true) => async () => {
  const { finished } = await controller.start({ scenario, users: CONNECTIONS, spawnRate: 100_000, durationMs: seconds * 1000, params: { baseUrl: url }, metrics });
  await finished;
};

export const autocannonRun = (url, seconds) => () => autocannon({ url, connections: CONNECTIONS, duration: seconds });

/**
 * undici alone: coord's connections (each user's own, as with load-test.connections 0) and dispatch options, each
 * response's callback sending the user's next request.
 */
export const undiciRun = (url, seconds) => () =>
  new Promise((resolve) => {
    const dispatchers = new HttpDispatchers(url, 0);
    const { origin } = new URL(url);
    const options = { origin, path: '/', method: 'GET', blocking: false };
    const end = performance.now() + seconds * 1000;
    let running = CONNECTIONS;
    for (let i = 0; i < CONNECTIONS; i++) {
      const { client } = dispatchers.forUser().take(origin);
      const next = () => {
        if (performance.now() < end) client.dispatch(options, { onConnect() {}, onHeaders: () => true, onData: () => true, onComplete: next, onError: next });
        else if (--running === 0) dispatchers.close().then(resolve);
      };
      next();
    }
  });
