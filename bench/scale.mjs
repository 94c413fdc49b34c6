// Scale: a plugin at 1×, 10× and 100× the fleets its tests use, on one
// redis-server, with the cost per unit flat (issue 34). One module per plugin
// under bench/scale/ (bench/scale/browser-grid.mjs says what it runs); this file
// runs its rounds, each round every size once (the order alternating, so a
// machine whose load drifts weighs on every size alike), and prints:
//  - each measure at each size, median (min–max) over the rounds, and the
//    ratios 10×/1× and 100×/1× (median of each round's own ratio: paired);
//  - the script calls' times in Redis (SLOWLOG at 0 µs) per size, longest
//    and the count over 2 ms included, beside a control: a Lua loop of fixed
//    work sized to the median call of the script that held Redis longest, and
//    run as many times as it was called, so it is as exposed to the host's
//    pauses (on a VM the rare long calls are the host's: its steal is printed);
//  - the machine's load (1-minute average) before and after each round.
// and writes bench/results/scale-PLUGIN.md.
// Run: npx tsc -p . && node bench/scale.mjs PLUGIN [rounds=3]   (PLUGIN: browser-grid, load-test, obniz, webdriver)
// A plugin is added as bench/scale/PLUGIN.mjs (its default export: unit, sizes, measures,
// setup, round, teardown, describe, loggedCalls, and optionally report(results) for a section of its own; see browser-grid.mjs) and its name in PLUGINS.
// A measure's target: { flat: X } (each size within X× the first size's), { max: N } (the largest
// size's at most N), or { within: X, of: SIZE } (each larger size within X× that size's: a cost
// that may grow with the fleet, but not faster than it).
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createBackend } from '../dist/adapters/index.js';
import { startRedis } from '../dist/test/support/redis.js';
import { exitWithHelpIfAsked } from './help.mjs';
import { controlCalls, cpuSteal, info, killOnExit, largest, logNoCall, median, mostTimeInRedis, prioritise, quantile, spread, stealShare } from './scale/kit.mjs';

exitWithHelpIfAsked(import.meta.url);
const PLUGINS = ['browser-grid', 'load-test', 'obniz', 'webdriver'];
const name = process.argv[2];
if (!PLUGINS.includes(name)) {
  console.error(`usage: node bench/scale.mjs PLUGIN [rounds=3]; PLUGIN is one of ${PLUGINS.join(', ')}`);
  process.exit(2);
}
const ROUNDS = Number(process.argv[3] ?? 3);
const bench = (await import(`./scale/${name}.mjs`)).default;
const began = Date.now();
const loads = [loadavg()[0]];
const stealBefore = cpuSteal();

// SCALE_KEEP_PAGES (bench/scale/obniz.mjs): redis-server's allocator (jemalloc) keeps the pages it frees
if (process.env.SCALE_KEEP_PAGES) process.env.MALLOC_CONF = 'dirty_decay_ms:-1,muzzy_decay_ms:-1';
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
killOnExit((await info(backend, 'server')).process_id);
const priority = await prioritise(backend);
await logNoCall(backend);
const log = (text) => console.error(`[${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${text}`);

/** size → [{ values: { measure: number }, calls: [{ script, ms }] }], one per round. */
const results = new Map(bench.sizes.map((s) => [s, []]));
let state;
try {
  state = await bench.setup({ redis, backend, log });
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? bench.sizes : [...bench.sizes].reverse();
    for (const size of order) {
      log(`round ${round}/${ROUNDS}: ${size.toLocaleString('en')} ${bench.unit}s`);
      const r = await bench.round(state, size);
      results.get(size).push(r);
      log(`  ${bench.measures.map((m) => `${m.label.split(':')[0]} ${r.values[m.key]?.toFixed(m.digits ?? 1) ?? '–'}`).join('; ')}`);
    }
    loads.push(loadavg()[0]);
  }
} finally {
  await bench.teardown?.(state).catch((error) => console.error('teardown:', error.message));
}

// ---- the control: as long and as many as the calls of the script that held Redis longest (the most exposed to the host's pauses)
const allCalls = [...results.values()].flatMap((rs) => rs.flatMap((r) => r.calls));
const longest = mostTimeInRedis(allCalls);
const control = await controlCalls(backend, median(longest.map((c) => c.ms)), Math.min(longest.length, 100_000));
log(`control: ${control.times.length} calls of a ${control.iterations}-iteration loop`);
loads.push(loadavg()[0]);
const steal = stealShare(stealBefore, cpuSteal());
await backend.close();
await redis.stop();

// ---- the report
const [one, ...more] = bench.sizes;
const fmt = (n) => n.toLocaleString('en');
const valuesAt = (size, key) => results.get(size).map((r) => r.values[key]).filter((v) => v !== undefined);
/** Each round's own ratio of size to the first size. */
const ratios = (size, key) => results.get(size).map((r, i) => r.values[key] / results.get(one)[i].values[key]).filter((x) => Number.isFinite(x));
const verdict = (m) => {
  if (m.target?.flat) {
    const worst = Math.max(...more.map((s) => median(ratios(s, m.key))));
    return `≤ ${m.target.flat}× of ${fmt(one)}: ${worst <= m.target.flat ? 'held' : `NOT held (${worst.toFixed(2)}×)`}`;
  }
  if (m.target?.within) {
    const of = m.target.of;
    const ratiosTo = (size) => results.get(size).map((r, i) => r.values[m.key] / results.get(of)[i].values[m.key]).filter((x) => Number.isFinite(x));
    const larger = bench.sizes.filter((s) => s > of && results.has(of));
    if (!larger.length || !results.get(of).length) return '';
    const worst = Math.max(...larger.map((s) => median(ratiosTo(s))));
    return `≤ ${m.target.within}× of ${fmt(of)}: ${worst <= m.target.within ? 'held' : 'NOT held'} (${worst.toFixed(2)}×)`;
  }
  if (m.target?.max !== undefined) {
    const worst = median(valuesAt(bench.sizes.at(-1), m.key));
    return `≤ ${m.target.max} ${m.unit} at ${fmt(bench.sizes.at(-1))}: ${worst <= m.target.max ? 'held' : `NOT held (${worst.toFixed(0)})`}`;
  }
  return '';
};
const measureTable = [
  `| measure | ${bench.sizes.map((s) => `${fmt(s)} ${bench.unit}s`).join(' | ')} | ${more.map((s) => `${s / one}×/1×`).join(' | ')} | target |`,
  `|---|${bench.sizes.map(() => '---:|').join('')}${more.map(() => '---:|').join('')}---|`,
  ...bench.measures.map((m) => {
    const cell = (xs, digits) => (xs.length ? spread(xs, digits) : '–');
    const cells = bench.sizes.map((s) => cell(valuesAt(s, m.key), m.digits ?? 1));
    const ratioCells = more.map((s) => cell(ratios(s, m.key), 2));
    return `| ${m.label} (${m.unit}) | ${cells.join(' | ')} | ${ratioCells.join(' | ')} | ${verdict(m)} |`;
  }),
].join('\n');
// calls over 2 ms a second of Redis time in such calls: a host pause hits a call in proportion to
// how long it runs, so this compares scripts of different lengths
const overTwoRate = (xs) => xs.filter((ms) => ms > 2).length / (xs.reduce((a, b) => a + b, 0) / 1000);
const row = (label, xs) =>
  `| ${label} | ${fmt(xs.length)} | ${quantile(xs, 0.5).toFixed(3)} | ${quantile(xs, 0.99).toFixed(3)} | ${quantile(xs, 0.999).toFixed(3)} | ${largest(xs).toFixed(3)} | ${xs.filter((ms) => ms > 2).length} | ${overTwoRate(xs).toFixed(2)} |`;
const scripts = [...new Set(allCalls.map((c) => c.script))].sort();
const callTable = [
  '| script calls (time in Redis) | count | p50 ms | p99 ms | p99.9 ms | longest ms | over 2 ms | over 2 ms a second in Redis |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...scripts.flatMap((script) =>
    bench.sizes.flatMap((size) => {
      const xs = results.get(size).flatMap((r) => r.calls.filter((c) => c.script === script).map((c) => c.ms));
      return xs.length ? [row(`${script}, ${fmt(size)} ${bench.unit}s`, xs)] : [];
    }),
  ),
  row(`control: a Lua loop of fixed work (${control.iterations} iterations, no Redis call; sized to ${longest[0]?.script ?? 'the calls'})`, control.times),
].join('\n');
const out = `# Scale: ${name} at ${bench.sizes.map(fmt).join(', ')} ${bench.unit}s on one redis-server ${new Date().toISOString().slice(0, 16)}Z

\`node bench/scale.mjs ${name} ${ROUNDS}\`: ${ROUNDS} rounds, each every size once (the order alternating); median (min–max) over
the rounds; the ratios are each round's own (paired), median (min–max). The run took ${((Date.now() - began) / 1000).toFixed(0)} s.

${bench.describe(state)}

${measureTable}

SLOWLOG at 0 µs over the calls ${bench.loggedCalls}:

${callTable}
${bench.report ? `\n${bench.report(results)}\n` : ''}
redis-server ran at ${priority} (so SLOWLOG times the scripts rather than waits for a core); the bench and coord's processes at normal priority.
Machine: ${cpus().length} cores shared with other work; 1-minute load average ${loads.map((l) => l.toFixed(1)).join(' → ')} (start, after each round, after the control); the hypervisor took ${steal.toFixed(1)}% of the cores' time (steal, /proc/stat) over the run.
`;
writeFileSync(new URL(`./results/scale-${name}.md`, import.meta.url), out);
console.log(out);
