// Load tools run as their users run them, each a whole process from spawn to
// exit, against the bench's counting server (bench/load-server.mjs, its own
// process), in paired rounds: every tool once per round, the order turned
// round each round, so what else runs on the machine weighs on each alike.
// Per run: when the first request arrived (the server's clock minus this
// process's clock at the spawn: one machine, one clock), the process's CPU
// (user + system of every thread and the children it waited for,
// /usr/bin/time, 10 ms ticks), its wall time and the requests the server
// counted. bench/load-startup.mjs and bench/load.mjs use it.
import { fork, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const cli = join(here, '../dist/bundle/coord.js');
export const autocannonBin = join(here, '../node_modules/.bin/autocannon');

/** The counting server, started; `url` to aim at, `ask('reset' | 'count')`, `stop()`. */
export async function startCountingServer() {
  const server = fork(join(here, 'load-server.mjs'));
  const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.port)));
  const ask = (type) =>
    new Promise((resolve) => {
      server.once('message', resolve);
      server.send({ type });
    });
  return { url: `http://127.0.0.1:${port}`, pid: server.pid, ask, stop: () => server.kill() };
}

/**
 * argv of `coord load run` with the bench's scenario (`scenario`: a file of bench/). With `main` (another checkout's
 * dist/bundle/coord.js), the scenario is that checkout's: inside coord's folder, as this one's (one outside gets a module
 * hook, which costs more).
 */
export function loadRunArgv(url, { scenario = 'load-scenario.mjs', users = 1, seconds = 1, workers = '1', main = cli }) {
  return [process.execPath, main, 'load', 'run', '--scenario', join(dirname(main), '../../bench', scenario), '--users', String(users), '--duration', `${seconds}s`, '--workers', String(workers), '--param', `baseUrl=${url}`];
}

/** argv of autocannon's CLI (`workers` > 0: its --workers). */
export function autocannonArgv(url, { connections = 1, seconds = 1, workers = 0 }) {
  return [autocannonBin, '-c', String(connections), '-d', String(seconds), ...(workers > 0 ? ['-w', String(workers)] : []), url];
}

/** One run of a tool: ms from spawn to its first request, CPU ms, wall ms, requests counted. */
export async function runWhole(server, [command, ...args]) {
  await server.ask('reset');
  const timeFile = join(tmpdir(), `coord-bench-time-${process.pid}`);
  const spawnedAt = Date.now();
  const child = spawn('/usr/bin/time', ['-o', timeFile, '-f', '%U %S', command, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-2000)));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const wallMs = Date.now() - spawnedAt;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`);
  const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  rmSync(timeFile, { force: true });
  const { firstAt, count } = await server.ask('count');
  if (!firstAt) throw new Error(`${command} ${args.join(' ')} sent no request`);
  return { firstMs: firstAt - spawnedAt, cpuMs: Math.round((user + system) * 1000), wallMs, count };
}

/**
 * `rounds` paired rounds of `tools` ([name, argv] pairs) after one warm-up round (the disk cache, not counted):
 * a Map of name → its runs, in round order. `label` names the rounds on stderr's progress line.
 */
export async function pairedRounds(server, tools, rounds, label = 'round') {
  for (const [, argv] of tools) await runWhole(server, argv);
  const runs = new Map(tools.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? tools : [...tools].reverse();
    for (const [name, argv] of order) runs.get(name).push(await runWhole(server, argv));
    process.stderr.write(`${label} ${round + 1}/${rounds}\r`);
  }
  process.stderr.write('\n');
  return runs;
}

export const median = (list) => {
  const s = [...list].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Lowest–highest of a list of ratios. */
export const range = (list) => `${Math.min(...list).toFixed(2)}–${Math.max(...list).toFixed(2)}`;
