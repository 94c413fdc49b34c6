// How long the `coord` command takes to start and finish, and the CPU (user +
// system, from wait4(): microseconds, though rounds still average out the noise) it uses, each as a
// ratio to `node -e 1` measured in the same run (the machine's load moves both alike).
// Each round runs every command once, in turn (paired rounds); the figures are
// medians over the rounds, with the spread (lowest–highest ratio of a round).
//
//   npm run build && node bench/cli-start.mjs      (BENCH_ROUNDS=21 for more rounds; 11 by default)
//
// BENCH_BEFORE=/other/checkout/dist/bundle/coord.js adds that build's status
// commands to every round (a before/after in the same paired rounds).
//
// Goals: wall clock (issue 23) --version and --help ≤ 3×, `coord plugins` ≤ 4×,
// `coord grid status` and `coord obniz status` against a live Redis ≤ 4×;
// CPU (issue 31) `coord grid status` ≤ 3×, as --version and --help.
// Writes bench/results/cli-start.md. Needs redis-server.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exitWithHelpIfAsked } from './help.mjs';

exitWithHelpIfAsked(import.meta.url);
const { startRedis } = await import('../dist/test/support/redis.js');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const main = fileURLToPath(new URL('../dist/bundle/coord.js', import.meta.url));
const redis = await startRedis();
// name, node's arguments, goal for the wall-clock ratio, goal for the CPU ratio
const commands = [
  ['node -e 1', ['-e', '1'], null, null],
  ['coord --version', [main, '--version'], 3, 3],
  ['coord --help', [main, '--help'], 3, 3],
  ['coord plugins', [main, 'plugins'], 4, null],
  ['coord grid status --redis URL', [main, 'grid', 'status', '--redis', redis.url], 4, 3],
  ['coord obniz status --redis URL', [main, 'obniz', 'status', '--redis', redis.url], 4, null],
  ['node -e "require(\'ioredis\')"', ['-e', "require('ioredis')"], null, null],
];
const before = process.env.BENCH_BEFORE;
if (before) {
  commands.push(['before: coord grid status --redis URL', [before, 'grid', 'status', '--redis', redis.url], null]);
  commands.push(['before: coord obniz status --redis URL', [before, 'obniz', 'status', '--redis', redis.url], null]);
}
const env = { ...process.env, REDIS_URL: '', COORD_REDIS_URL: '', NODE_OPTIONS: '' };
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// Each command runs under a small python3 parent that forks it and reads its
// rusage with wait4(): CPU time to the microsecond, where /usr/bin/time prints
// 10 ms steps (a 20 ms difference between two commands was lost in them).
const PARENT = `import os, sys, time
start = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
os.write(3, f"{(time.monotonic() - start) * 1000:.3f} {(ru.ru_utime + ru.ru_stime) * 1000:.3f} {os.waitstatus_to_exitcode(status)}".encode())`;
if (spawnSync('python3', ['-c', '1']).status !== 0) throw new Error('bench/cli-start.mjs needs python3 (Debian: apt-get install python3) to read each run\'s CPU time');

/** One run: its wall-clock ms and its CPU ms (user + system). */
function timeOnce(args) {
  const r = spawnSync('python3', ['-c', PARENT, process.execPath, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  const [wall, cpu, code] = (r.output[3] ?? '').split(' ').map(Number);
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited ${code}: ${r.stderr}`);
  return { wall, cpu };
}

const loadBefore = load();
for (const [, args] of commands) timeOnce(args); // warm-up: the file cache, not counted
const ms = commands.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, args]] of commands.entries()) ms[i].push(timeOnce(args));
  process.stderr.write(`round ${round + 1}/${ROUNDS}\r`);
}
process.stderr.write('\n');
const loadAfter = load();
redis.stop();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** A table of one measure (`wall` or `cpu`): each command's median, its ratio to the same round's node -e 1, the spread. */
function table(measure, heading, goalColumn) {
  const rows = commands.map(([name, , wallGoal, cpuGoal], i) => {
    const values = ms[i].map((m) => m[measure]);
    const ratios = values.map((v, round) => v / ms[0][round][measure]); // paired: each round against its own node -e 1
    const ratio = median(ratios);
    const goal = goalColumn === 'wall' ? wallGoal : cpuGoal;
    return { name, median: median(values), ratio, low: Math.min(...ratios), high: Math.max(...ratios), goal, met: goal == null ? '' : ratio <= goal ? 'yes' : 'NO' };
  });
  return [
    `| command | ${heading} | ratio to node -e 1 (median of paired rounds) | spread of the ratio (lowest–highest round) | goal | met |`,
    '|---|---:|---:|---|---:|---|',
    ...rows.map((r) => `| \`${r.name}\` | ${r.median.toFixed(0)} | ${r.ratio.toFixed(2)}× | ${r.low.toFixed(2)}–${r.high.toFixed(2)}× | ${r.goal == null ? '' : `≤ ${r.goal}×`} | ${r.met} |`),
  ].join('\n');
}
const text = `# coord CLI start-up

\`node bench/cli-start.mjs\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}: ${ROUNDS} paired rounds (each round runs every
command once, in this order, after one warm-up round); each command's time is the wall clock of the whole process,
from fork to exit, and its CPU (user + system, from wait4's rusage). \`coord grid status\` and \`coord obniz status\` ask a live redis-server on loopback (empty
keyspace).${before ? ` Rows "before:" run another build (\`BENCH_BEFORE=${before}\`) in the same rounds.` : ''} Load average (1, 5, 15 min) before: ${loadBefore};
after: ${loadAfter} (on a shared machine absolute times are inflated; the ratio to \`node -e 1\` of the same round is the figure to read).

## Wall clock

${table('wall', 'median ms', 'wall')}

## CPU

${table('cpu', 'median CPU ms (user + system)', 'cpu')}
`;
console.log(text);
writeFileSync(fileURLToPath(new URL('./results/cli-start.md', import.meta.url)), text);
