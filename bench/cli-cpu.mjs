// The CPU (user + system) the `coord` command uses from start to exit, as a
// ratio to `node -e 1` measured in the same round (paired rounds, medians):
// on a shared machine CPU time moves less than wall time. Measured with
// /usr/bin/time (10 ms ticks, hence the rounds).
//
//   npx tsc -p tsconfig.json && node bench/cli-cpu.mjs      (BENCH_ROUNDS=21 by default)
//
// Goal (issue 31): `coord grid status --redis URL` ≤ 3× `node -e 1`, as
// --version and --help. Writes bench/results/cli-cpu.md. Needs redis-server.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  // The comment above is the help: print it, run nothing.
  const head = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0];
  process.stdout.write(`${head.replace(/^\/\/ ?/gm, '')}\n`);
  process.exit(0);
}
const { startRedis } = await import('../dist/test/support/redis.js');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const redis = await startRedis();
const commands = [
  ['node -e 1', ['-e', '1'], null],
  ['coord --version', [main, '--version'], 3],
  ['coord --help', [main, '--help'], 3],
  ['coord grid status --redis URL', [main, 'grid', 'status', '--redis', redis.url], 3],
  ['node -e "require(\'ioredis\')"', ['-e', "require('ioredis')"], null],
];
const env = { ...process.env, REDIS_URL: '', COORD_REDIS_URL: '', NODE_OPTIONS: '' };

/** CPU ms (user + system) of one run. */
function cpuOnce(args) {
  const r = spawnSync('/usr/bin/time', ['-f', 'CPU %U %S', process.execPath, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const [, user, system] = /CPU (\S+) (\S+)\s*$/.exec(r.stderr);
  return (Number(user) + Number(system)) * 1000;
}

for (const [, args] of commands) cpuOnce(args); // warm-up: the file cache, not counted
const ms = commands.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, args]] of commands.entries()) ms[i].push(cpuOnce(args));
  process.stderr.write(`round ${round + 1}/${ROUNDS}\r`);
}
process.stderr.write('\n');
redis.stop();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = commands.map(([name, , goal], i) => {
  const ratio = median(ms[i].map((v, round) => v / ms[0][round]));
  return { name, median: median(ms[i]), ratio, goal, met: goal === null ? '' : ratio <= goal ? 'yes' : 'NO' };
});
const table = [
  '| command | median CPU ms (user + system) | ratio to node -e 1 (median of paired rounds) | goal | met |',
  '|---|---:|---:|---:|---|',
  ...rows.map((r) => `| \`${r.name}\` | ${r.median.toFixed(0)} | ${r.ratio.toFixed(2)}× | ${r.goal === null ? '' : `≤ ${r.goal}×`} | ${r.met} |`),
].join('\n');
const text = `# coord CLI start-up: CPU

\`node bench/cli-cpu.mjs\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}: ${ROUNDS} paired rounds; each figure is the
user + system CPU of the whole process from spawn to exit (/usr/bin/time, 10 ms ticks). \`coord grid status\` asks a
live redis-server on loopback (empty keyspace).

${table}
`;
console.log(text);
writeFileSync(fileURLToPath(new URL('./results/cli-cpu.md', import.meta.url)), text);
