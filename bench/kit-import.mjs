// What importing the plugin kit ('coordkit/plugin') costs a process, in CPU
// time: each measurement is a fresh `node` running this file as a probe
// (`--probe <specifier>`), which reads process.cpuUsage() around one
// `await import(...)` — as a user's script beside the package would. Each
// round measures, in turn, an empty module file (the ES module loader's own
// cost, the baseline), the plugin kit and
// the whole of 'coordkit' (paired rounds: the machine's load moves all three
// alike); the figures are medians over the rounds with their spread, and the
// kit's cost over the baseline of the same round.
//
//   npx tsc -p tsconfig.json && node bench/kit-import.mjs     (BENCH_ROUNDS=41 for more rounds; 21 by default)
//
// BENCH_BEFORE=/other/checkout (built) adds that build's kit, and this
// build's, imported by path (dist/entries/plugin.js) to every round: a
// before/after in the same paired rounds.
//
// Goal (issue 31): the kit costs ≤ 30 ms of CPU to import. Runs from the
// repository root (the package imports itself by name, so dist/ must be
// built). Writes bench/results/kit-import.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const probeAt = process.argv.indexOf('--probe');
if (probeAt > 0) {
  const t0 = process.cpuUsage();
  await import(process.argv[probeAt + 1]);
  const u = process.cpuUsage(t0);
  console.log((u.user + u.system) / 1000);
  process.exit(0);
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').filter((line) => line.startsWith('//')).map((line) => line.slice(3)).join('\n'));
  process.exit(0);
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const GOAL_MS = 30;
const self = fileURLToPath(import.meta.url);
const scratch = mkdtempSync(join(tmpdir(), 'kit-import-'));
const empty = join(scratch, 'empty.mjs');
writeFileSync(empty, 'export {};\n');
const targets = [
  ['an empty module (baseline)', pathToFileURL(empty).href],
  ["'coordkit/plugin'", 'coordkit/plugin'],
  ["'coordkit'", 'coordkit'],
];
const before = process.env.BENCH_BEFORE;
if (before) {
  targets.push(['this build: dist/entries/plugin.js by path', new URL('../dist/entries/plugin.js', import.meta.url).href]);
  targets.push(['before: dist/entries/plugin.js by path', pathToFileURL(join(before, 'dist/entries/plugin.js')).href]);
}
const env = { ...process.env, NODE_OPTIONS: '' };
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** CPU ms (user + system) one fresh process spends importing `specifier`. */
function cpuOnce(specifier) {
  const r = spawnSync(process.execPath, [self, '--probe', specifier], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`importing ${specifier} exited ${r.status}: ${r.stderr}`);
  return Number(r.stdout.trim());
}

const loadBefore = load();
for (const [, specifier] of targets) cpuOnce(specifier); // warm-up: the file cache, not counted
const ms = targets.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, specifier]] of targets.entries()) ms[i].push(cpuOnce(specifier));
  process.stderr.write(`round ${round + 1}/${ROUNDS}\r`);
}
process.stderr.write('\n');
const loadAfter = load();
rmSync(scratch, { recursive: true, force: true });

const sorted = (values) => [...values].sort((a, b) => a - b);
const median = (values) => sorted(values)[Math.floor(values.length / 2)];
const quartiles = (values) => {
  const s = sorted(values);
  return [s[Math.floor((s.length - 1) / 4)], s[Math.ceil(((s.length - 1) * 3) / 4)]];
};
const rows = targets.map(([name], i) => {
  const over = ms[i].map((v, round) => v - ms[0][round]); // paired: each round against its own baseline
  const [q1, q3] = quartiles(ms[i]);
  return { name, median: median(ms[i]), q1, q3, low: Math.min(...ms[i]), high: Math.max(...ms[i]), over: median(over) };
});
const kit = rows[1];
const f = (n) => n.toFixed(1);
const table = [
  '| import | median CPU ms | middle half (25th–75th percentile) | lowest–highest | over the baseline (median of paired rounds) |',
  '|---|---:|---|---|---:|',
  ...rows.map((r, i) => `| ${r.name} | ${f(r.median)} | ${f(r.q1)}–${f(r.q3)} | ${f(r.low)}–${f(r.high)} | ${i === 0 ? '' : f(r.over)} |`),
].join('\n');
const text = `# What importing the plugin kit costs

\`node bench/kit-import.mjs\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}: ${ROUNDS} paired rounds (each round imports, in a fresh
process each, an empty module, \`'coordkit/plugin'\` and \`'coordkit'\`, after one warm-up round); each figure is the process's
CPU time (user + system, \`process.cpuUsage()\`) around the one \`await import(...)\` in a script inside the package
(\`bench/kit-import.mjs --probe\`), which resolves the package by its own name.${before ? ` Rows "by path" import the built file directly; "before:" is another build (\`BENCH_BEFORE=${before}\`) in the same rounds.` : ''} Load average (1, 5, 15 min) before: ${loadBefore}; after: ${loadAfter} (on a shared machine CPU times
are inflated too; the kit's cost over the baseline of the same round moves less).

${table}

Goal (issue 31): the kit costs ≤ ${GOAL_MS} ms of CPU to import — median ${f(kit.median)} ms: ${kit.median <= GOAL_MS ? 'met' : 'NOT met'}.
`;
console.log(text);
writeFileSync(fileURLToPath(new URL('./results/kit-import.md', import.meta.url)), text);
