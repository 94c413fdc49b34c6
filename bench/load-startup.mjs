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
// rounds (bench/load-process-runs.mjs); a ratio is coord's figure over
// autocannon's in the same round, reported as the median with the lowest
// and highest round.
// Goals (issue 32), on a quiet machine: the first request within 1 s of
// launch; start-up CPU ≤ 1.5× autocannon's.
//
//   npm run build && node bench/load-startup.mjs      (BENCH_ROUNDS=11 by default;
//   BENCH_BEFORE=/other/checkout/dist/bundle/coord.js adds that build's .mjs runs)
//
// Writes bench/results/load-startup.md. bench/load.mjs prints the same table.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { autocannonArgv, loadRunArgv, median, pairedRounds, range, startCountingServer } from './load-process-runs.mjs';
import { exitWithHelpIfAsked } from './help.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');

/** The start-up rounds against `server`: the table and how they were run (markdown). */
export async function startupReport(server, rounds, before = process.env.BENCH_BEFORE) {
  const { url } = server;
  const tools = [
    ['autocannon -c 1 -d 1', autocannonArgv(url, {})],
    ['coord load run .mjs --workers 1', loadRunArgv(url, {})],
    ['coord load run .mjs --workers auto', loadRunArgv(url, { workers: 'auto' })],
    ['coord load run .ts --workers 1', loadRunArgv(url, { scenario: 'load-scenario.ts' })],
    ['coord load run .ts --workers auto', loadRunArgv(url, { scenario: 'load-scenario.ts', workers: 'auto' })],
  ];
  // BENCH_BEFORE=/other/checkout/dist/bundle/coord.js: that build's .mjs runs in the same rounds (a before/after).
  if (before) {
    tools.push(['before: coord load run .mjs --workers 1', loadRunArgv(url, { main: before })]);
    tools.push(['before: coord load run .mjs --workers auto', loadRunArgv(url, { workers: 'auto', main: before })]);
  }
  const loadBefore = load();
  const runs = await pairedRounds(server, tools, rounds, 'start-up round');
  const base = runs.get(tools[0][0]);
  const ratio = (list, field) => list.map((r, i) => r[field] / base[i][field]);
  const rows = tools.map(([name]) => {
    const list = runs.get(name);
    const first = median(list.map((r) => r.firstMs));
    const vsFirst = ratio(list, 'firstMs');
    const vsCpu = ratio(list, 'cpuMs');
    const goals = name.startsWith('coord') ? `${first <= 1000 ? 'yes' : 'NO'} / ${median(vsCpu) <= 1.5 ? 'yes' : 'NO'}` : '';
    return `| ${name} | ${first} | ${median(vsFirst).toFixed(2)}× (${range(vsFirst)}) | ${median(list.map((r) => r.cpuMs))} | ${median(vsCpu).toFixed(2)}× (${range(vsCpu)}) | ${median(list.map((r) => r.wallMs))} | ${median(list.map((r) => r.count))} | ${goals} |`;
  });
  return `${rounds} paired rounds after one warm-up round (every tool once per round, the order turned round each round). Each tool
sends 1 connection's (user's) requests for 1 s to the bench's HTTP server.${before ? ` Rows "before:" run another build (\`BENCH_BEFORE=${before}\`) in the same rounds.` : ''}
First request: ms from spawning the tool to the server receiving its first request. CPU: the tool's whole process (every
thread), start to exit, its 1 s of requests included (/usr/bin/time, 10 ms ticks). Ratios are to autocannon in the same
round: median (lowest–highest round). Load average (1, 5, 15 min) before: ${loadBefore}; after: ${load()}.

| tool | first request ms (median) | vs autocannon | CPU ms (median) | vs autocannon | wall ms | requests | goals: first ≤ 1000 ms / CPU ≤ 1.5× |
|---|---:|---:|---:|---:|---:|---:|---|
${rows.join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  exitWithHelpIfAsked(import.meta.url);
  const server = await startCountingServer();
  const report = await startupReport(server, Number(process.env.BENCH_ROUNDS ?? 11));
  server.stop();
  const text = `# load-test start-up: the first request, and its cost

\`node bench/load-startup.mjs\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}:
${report}`;
  writeFileSync(join(here, 'results/load-startup.md'), text);
  process.stdout.write(text);
}
