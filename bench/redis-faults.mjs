// Recovery from Redis faults, per plugin and adapter, over several rounds: runs
// the fault tests (real redis-server processes: a Cluster master killed -9 and
// its replica promoted, a Sentinel failover, a 20 s DEBUG SLEEP, Redis lost for
// good) and gathers the figures each prints (its `# …` comments: promotion
// times, requests reported vs served, time to a new session, 503 windows,
// workers back after a heartbeat), with the machine's load before and after
// each run. The tests assert the bounds; this gathers their spread.
//
//   npm run build && node bench/redis-faults.mjs            (BENCH_ROUNDS=3 by default)
//   BENCH_ONLY=load-test node bench/redis-faults.mjs       (one plugin's file)
//
// Writes bench/results/redis-faults.md. Needs what the tests need (redis-server,
// redis-tools, chromium, chromium-driver: bash scripts/install-deps.sh test).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

if (process.argv.includes('--help')) {
  process.stdout.write('node bench/redis-faults.mjs   (env: BENCH_ROUNDS=3, BENCH_ONLY=<plugin>, BENCH_NOTE=<machine>): runs the Redis fault tests and writes bench/results/redis-faults.md\n');
  process.exit(0);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const root = fileURLToPath(new URL('..', import.meta.url));
const files = {
  'load-test': 'test/load-test-redis-faults.test.ts',
  obniz: 'test/obniz-redis-faults.test.ts',
  'webdriver (cluster)': 'test/webdriver-cluster-failover.test.ts',
  'webdriver (Sentinel, pause, loss)': 'test/webdriver-redis-faults.test.ts',
  'browser-grid (cluster)': 'test/browser-grid-cluster-failover.test.ts',
  'browser-grid (Sentinel, pause, loss)': 'test/browser-grid-redis-faults.test.ts',
};
const only = process.env.BENCH_ONLY;
const chosen = Object.entries(files).filter(([name]) => !only || name.startsWith(only));
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** The figures a run printed: its comment lines, under the subtest they belong to. */
function figures(tap) {
  const out = [];
  let subtest = '';
  for (const line of tap.split('\n')) {
    const sub = /^ {4}# Subtest: (.*)$/.exec(line);
    if (sub) subtest = sub[1];
    const comment = /^ {8}# (.*)$/.exec(line);
    if (comment && !comment[1].startsWith('Subtest:') && !comment[1].startsWith('time=')) out.push([subtest, comment[1]]);
  }
  return out;
}

const sections = [];
for (const [name, file] of chosen) {
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(`${name}: round ${round}/${ROUNDS}, load ${load()}\n`);
    const before = load();
    const started = performance.now();
    const r = spawnSync(process.execPath, [`${root}node_modules/.bin/tap`, file, '--reporter=tap', '--disable-coverage'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    const passed = r.status === 0;
    rounds.push({ round, before, after: load(), seconds, passed, figures: figures(r.stdout) });
    if (!passed) process.stderr.write(`${name}: round ${round} FAILED (its figures are kept, marked)\n`);
  }
  const lines = [`## ${name} — \`${file}\``, ''];
  for (const { round, before, after, seconds, passed, figures: list } of rounds) {
    lines.push(`### Round ${round}: ${passed ? 'passed' : '**failed**'}, ${seconds} s, load ${before} → ${after}`, '');
    let last = '';
    for (const [subtest, text] of list) {
      if (subtest !== last) lines.push(`- *${subtest}*`);
      last = subtest;
      lines.push(`  - ${text}`);
    }
    lines.push('');
  }
  sections.push(lines.join('\n'));
}

const header = `# Recovery from Redis faults

\`node bench/redis-faults.mjs\` (${ROUNDS} rounds, ${new Date().toISOString().slice(0, 16)} UTC, ${process.env.BENCH_NOTE ?? 'this project\'s 2-core VM'}).
Each round runs a plugin's fault test once (real redis-server 7.0 processes, both adapters); below, the
figures it printed. The tests assert the bounds (issue 30); this shows their spread and the load they ran at.
`;
writeFileSync(`${root}bench/results/redis-faults.md`, [header, ...sections].join('\n'));
process.stderr.write('wrote bench/results/redis-faults.md\n');
