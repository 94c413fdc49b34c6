// How soon a load test's first request reaches its target, and what its
// start-up costs, beside autocannon's: each tool runs 1 connection (user) for
// 1 s against the bench's server (its own process, bench/load-server.mjs),
// which notes when the first request since the tool was spawned arrived.
//   - first request: the server's clock at that request minus this process's
//     clock when it spawned the tool (one machine, one clock);
//   - CPU: the whole process's user + system time (/usr/bin/time: every thread,
//     and children waited for), start to exit, 1 s of requests included;
//   - wall: spawn to exit.
// coord: `coord load run --users 1 --duration 1s` with the .mjs and the .ts
// scenario (bench/load-scenario.*), `--workers 1` and `--workers auto`.
// autocannon: its CLI (node_modules/.bin/autocannon -c 1 -d 1). Paired
// rounds: every tool once per round, the order turned round each round; a
// ratio is coord's figure over autocannon's in the same round, reported as
// the median with the lowest and highest round.
// Goals (issue 32), on a quiet machine: the first request within 1 s of
// launch; start-up CPU ≤ 1.5× autocannon's.
//
//   npm run build && node bench/load-startup.mjs      (BENCH_ROUNDS=11 by default;
//   BENCH_BEFORE=/other/checkout/dist/cli/main.js adds that build's .mjs runs)
//
// Writes bench/results/load-startup.md.
import { spawn } from 'node:child_process';
import { fork } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  const head = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0];
  process.stdout.write(`${head.replace(/^\/\/ ?/gm, '')}\n`);
  process.exit(0);
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const cli = join(here, '../dist/cli/main.js');
const server = fork(join(here, 'load-server.mjs'));
const port = await new Promise((resolve) => server.once('message', (m) => resolve(m.port)));
const url = `http://127.0.0.1:${port}`;
const ask = (type) =>
  new Promise((resolve) => {
    server.once('message', resolve);
    server.send({ type });
  });

const loadRun = (scenario, workers, main = cli) => [process.execPath, main, 'load', 'run', '--scenario', join(here, scenario), '--users', '1', '--duration', '1s', '--workers', workers, '--param', `baseUrl=${url}`];
const tools = [
  ['autocannon -c 1 -d 1', [join(here, '../node_modules/.bin/autocannon'), '-c', '1', '-d', '1', url]],
  ['coord load run .mjs --workers 1', loadRun('load-scenario.mjs', '1')],
  ['coord load run .mjs --workers auto', loadRun('load-scenario.mjs', 'auto')],
  ['coord load run .ts --workers 1', loadRun('load-scenario.ts', '1')],
  ['coord load run .ts --workers auto', loadRun('load-scenario.ts', 'auto')],
];
// BENCH_BEFORE=/other/checkout/dist/cli/main.js: that build's .mjs runs in the same rounds (a before/after).
if (process.env.BENCH_BEFORE) {
  tools.push(['before: coord load run .mjs --workers 1', loadRun('load-scenario.mjs', '1', process.env.BENCH_BEFORE)]);
  tools.push(['before: coord load run .mjs --workers auto', loadRun('load-scenario.mjs', 'auto', process.env.BENCH_BEFORE)]);
}

/** One run of a tool: ms from spawn to its first request, CPU ms, wall ms. */
async function runOnce([command, ...args]) {
  await ask('reset');
  const timeFile = join(here, `.time-${process.pid}`);
  const spawnedAt = Date.now();
  const child = spawn('/usr/bin/time', ['-o', timeFile, '-f', '%U %S', command, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const wallMs = Date.now() - spawnedAt;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`);
  const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  const { firstAt, count } = await ask('count');
  if (!firstAt) throw new Error(`${command} ${args.join(' ')} sent no request`);
  return { firstMs: firstAt - spawnedAt, cpuMs: Math.round((user + system) * 1000), wallMs, count };
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const spread = (list) => `${Math.min(...list).toFixed(2)}–${Math.max(...list).toFixed(2)}`;
const loadBefore = loadavg().map((n) => n.toFixed(2)).join(' ');

const runs = new Map(tools.map(([name]) => [name, []]));
for (const [, argv] of tools) await runOnce(argv); // warm-up: the disk cache, not counted
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? tools : [...tools].reverse();
  for (const [name, argv] of order) runs.get(name).push(await runOnce(argv));
  process.stderr.write(`round ${round + 1}/${ROUNDS}\r`);
}
process.stderr.write('\n');
server.kill();
rmSync(join(here, `.time-${process.pid}`), { force: true });
const loadAfter = loadavg().map((n) => n.toFixed(2)).join(' ');

const base = runs.get(tools[0][0]);
const ratio = (list, field) => list.map((r, i) => r[field] / base[i][field]);
const rows = tools.map(([name]) => {
  const list = runs.get(name);
  const first = list.map((r) => r.firstMs);
  const cpu = list.map((r) => r.cpuMs);
  const vsFirst = ratio(list, 'firstMs');
  const vsCpu = ratio(list, 'cpuMs');
  return `| ${name} | ${median(first)} | ${median(vsFirst).toFixed(2)}× (${spread(vsFirst)}) | ${median(cpu)} | ${median(vsCpu).toFixed(2)}× (${spread(vsCpu)}) | ${median(list.map((r) => r.wallMs))} | ${median(list.map((r) => r.count))} | ${name.startsWith('coord') ? `${median(first) <= 1000 ? 'yes' : 'NO'} / ${median(vsCpu) <= 1.5 ? 'yes' : 'NO'}` : ''} |`;
});
const text = `# load-test start-up: the first request, and its cost

\`node bench/load-startup.mjs\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}: ${ROUNDS} paired rounds after one warm-up
round (every tool once per round, the order turned round each round). Each tool sends 1 connection's (user's) requests for 1 s
to the bench's HTTP server.${process.env.BENCH_BEFORE ? ` Rows "before:" run another build (\`BENCH_BEFORE=${process.env.BENCH_BEFORE}\`) in the same rounds.` : ''} First request: ms from spawning the tool to the server receiving its first request. CPU: the
tool's whole process (every thread), start to exit, its 1 s of requests included (/usr/bin/time, 10 ms ticks). Ratios
are to autocannon in the same round: median (lowest–highest round). Load average (1, 5, 15 min) before: ${loadBefore};
after: ${loadAfter}.

| tool | first request ms (median) | vs autocannon | CPU ms (median) | vs autocannon | wall ms | requests | goals: first ≤ 1000 ms / CPU ≤ 1.5× |
|---|---:|---:|---:|---:|---:|---:|---|
${rows.join('\n')}
`;
writeFileSync(join(here, 'results/load-startup.md'), text);
process.stdout.write(text);
