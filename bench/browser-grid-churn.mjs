// browser-grid's front door under connection churn: what 2,000
// upgrade-then-close connections (raw TCP: a valid WebSocket upgrade request
// with a Playwright User-Agent, then end) cost the proxy's memory and a real
// client served meanwhile (the churn comes from a process of its own,
// test/support/churn.ts, as abusers are not the client's process). Two deployments, one after the other:
//  - redis: a proxy and a worker in processes of their own on a real redis-server;
//  - all-in-one: `coord run --plugin browser-grid` (every role in one process, embedded backend).
// Each one is warmed up with a real playwright-core client (the worker's Chromium), its
// proxy's RSS taken as the baseline, then ROUNDS paired rounds: the real client's
// session time (connect, newPage, goto, close) over QUIET sessions, then the same
// client looping while the burst runs (its sessions that overlapped the burst), then the
// proxy's RSS 10 s after the burst. The proxy's own heap / external / arrayBuffers
// figures come from a probe loaded into it (--import), read on SIGUSR2.
// Run: npx tsc -p . && node dist/scripts/compile-validators.js && node bench/browser-grid-churn.mjs
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { churn } from '../dist/test/support/churn.js';
import { coord } from '../dist/test/support/cli.js';
import { startPage } from '../dist/test/support/page.js';
import { freePort, startRedis } from '../dist/test/support/redis.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const QUIET = Number(process.env.QUIET ?? 5);
const BURST = Number(process.env.BURST ?? 2000);
const AFTER_MS = 10_000;
const MODES = (process.env.MODES ?? 'redis,all-in-one').split(',');
const loadBefore = loadavg()[0];
const sets = ['maxConcurrentSessions=5', 'workers=2', 'maxLifetimeSessions=100000'].flatMap((s) => ['--set', `browser-grid.${s}`]);

// The probe the proxy process loads: its memory figures on SIGUSR2, one JSON line on stderr.
const probe = join(mkdtempSync(join(tmpdir(), 'coord-churn-')), 'probe.mjs');
writeFileSync(probe, `import { getHeapStatistics } from 'node:v8';
process.on('SIGUSR2', () => {
  const m = process.memoryUsage();
  const h = getHeapStatistics();
  process.stderr.write('MEMPROBE ' + JSON.stringify({ ...m, heapCommitted: h.total_physical_size, mallocedMemory: h.malloced_memory, peakMalloced: h.peak_malloced_memory }) + '\\n');
});
`);

const page = await startPage();
const median = (xs) => quantile(xs, 0.5);
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One real session: connect, new page, goto, close; its time in ms. */
async function session(port, n) {
  const started = performance.now();
  const browser = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 60_000 });
  const p = await browser.newPage();
  await p.goto(`${page.url}/churn${n}`);
  await browser.close();
  return { started, ms: performance.now() - started };
}

/** The process's resident memory (anonymous and file-backed), in bytes. */
function rss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

/** The probe's figures from the process. */
async function memory(p) {
  const before = p.stderr().length;
  p.child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    const line = /MEMPROBE (.+)\n/.exec(p.stderr().slice(before));
    if (line) return { ...JSON.parse(line[1]), ...rss(p.child.pid) };
    await sleep(20);
  }
  throw new Error('the proxy did not answer its memory probe');
}

async function start(mode) {
  const port = await freePort();
  const env = { NODE_OPTIONS: `--import=${probe}` };
  if (mode === 'all-in-one') {
    const all = coord(['run', '--plugin', 'browser-grid', '--set', `browser-grid.port=${port}`, ...sets], env);
    await all.waitFor((l) => l.msg === 'ready', 90_000);
    return { port, proxy: all, stop: async () => (all.kill('SIGTERM'), await all.exited) };
  }
  const redis = await startRedis();
  const common = ['--redis', redis.url, '--prefix', '{churn}:', ...sets];
  const worker = coord(['run', '--plugin', 'browser-grid', '--role', 'worker', ...common]);
  const proxy = coord(['run', '--plugin', 'browser-grid', '--role', 'proxy', '--set', `browser-grid.port=${port}`, ...common], env);
  await Promise.all([worker, proxy].map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
  return {
    port,
    proxy,
    stop: async () => {
      for (const p of [proxy, worker]) p.kill('SIGTERM');
      await Promise.all([proxy.exited, worker.exited]);
      await redis.stop();
    },
  };
}

async function measure(mode) {
  const grid = await start(mode);
  const { port, proxy } = grid;
  let n = 0;
  for (let i = 0; i < 5; i++) await session(port, n++);
  await sleep(3000); // the warm-up's garbage goes on the proxy's own pace, as a quiet proxy's would
  const baseline = await memory(proxy);
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const load = loadavg()[0];
    const quiet = [];
    for (let i = 0; i < QUIET; i++) quiet.push((await session(port, n++)).ms);
    const before = await memory(proxy);
    // the real client loops while the burst runs; its sessions begun before the burst ended count
    let churning = true;
    const during = [];
    const failures = [];
    const looping = (async () => {
      while (churning) {
        try {
          during.push(await session(port, n++));
        } catch (error) {
          failures.push(error.message.split('\n')[0]);
        }
      }
    })();
    const burstStart = performance.now();
    await churn(port, BURST);
    const burstEnd = performance.now();
    // its sessions begun during the burst count: the one in flight when it ended finishes
    churning = false;
    await looping;
    const overlapped = during.filter((s) => s.started < burstEnd).map((s) => s.ms);
    await sleep(Math.max(0, AFTER_MS - (performance.now() - burstEnd)));
    const after = await memory(proxy);
    rounds.push({ load, quiet: median(quiet), during: median(overlapped), duringMax: Math.max(...overlapped), burstMs: burstEnd - burstStart, failures, before, after });
    process.stderr.write(`${mode} round ${r + 1}/${ROUNDS}: quiet ${median(quiet).toFixed(0)} ms, during churn ${median(overlapped).toFixed(0)} ms (max ${Math.max(...overlapped).toFixed(0)}), burst ${(burstEnd - burstStart).toFixed(0)} ms; RSS ${mb(before.rss)} → ${mb(after.rss)} MB (baseline ${mb(baseline.rss)}), heap ${mb(after.heapUsed)}/${mb(after.heapTotal)}, external ${mb(after.external)}, arrayBuffers ${mb(after.arrayBuffers)}; load ${load.toFixed(1)}${failures.length ? `; failures: ${failures.join('; ')}` : ''}\n`);
  }
  await grid.stop();
  return { baseline, rounds };
}

const results = {};
for (const mode of MODES) results[mode] = await measure(mode);
await page.close();

const spread = (xs, f = (x) => x.toFixed(2)) => `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
const sections = Object.entries(results).map(([mode, { baseline, rounds }]) => {
  const rows = rounds.map((r, i) =>
    `| ${i + 1} | ${r.quiet.toFixed(0)} ms | ${r.during.toFixed(0)} ms (max ${r.duringMax.toFixed(0)}) | ${(r.during / r.quiet).toFixed(2)}× | ${(r.burstMs / 1000).toFixed(1)} s | ${mb(r.before.rss)} → ${mb(r.after.rss)} MB | ${((r.after.rss / baseline.rss - 1) * 100).toFixed(0)}% | ${mb(r.after.heapUsed)} / ${mb(r.after.heapTotal)} MB | ${mb(r.after.external)} / ${mb(r.after.arrayBuffers)} MB | ${r.load.toFixed(1)} | ${r.failures.length} |`);
  return `## ${mode}

Baseline after warm-up: RSS ${mb(baseline.rss)} MB (anonymous ${mb(baseline.anon)} MB), V8 heap used ${mb(baseline.heapUsed)} of ${mb(baseline.heapTotal)} MB, external ${mb(baseline.external)} MB (arrayBuffers ${mb(baseline.arrayBuffers)} MB).

| round | real session, quiet (median of ${QUIET}) | during the burst (median) | ratio | burst took | RSS before → 10 s after | vs baseline | heap used / total 10 s after | external / arrayBuffers | load | client failures |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

Median of the rounds (lowest–highest): RSS 10 s after the burst ${spread(rounds.map((r) => (r.after.rss / baseline.rss - 1) * 100), (x) => `${x.toFixed(0)}%`)} over the baseline; the real client's session during the burst ÷ quiet, paired within each round, ${spread(rounds.map((r) => r.during / r.quiet), (x) => `${x.toFixed(2)}×`)}; quiet sessions ${spread(rounds.map((r) => r.quiet), (x) => `${x.toFixed(0)} ms`)}, during the burst ${spread(rounds.map((r) => r.during), (x) => `${x.toFixed(0)} ms`)}.
`;
});
const loads = Object.values(results).flatMap((r) => r.rounds.map((x) => x.load));
const out = `# browser-grid under connection churn, ${new Date().toISOString().slice(0, 10)} (bench/browser-grid-churn.mjs; ${ROUNDS} paired rounds per deployment, ${BURST} upgrade-then-close connections per round)

Goals (docs/browser-grid.md): the proxy's RSS within 10% of its baseline 10 s after a burst; a real client's session (connect, newPage, goto a local page, close) within 2× its quiet time while the burst runs.

${sections.join('\n')}
Machine: ${cpus().length} cores shared with other work; 1-minute load average ${loadBefore.toFixed(1)} at the start, ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} at the rounds' starts (median ${median(loads).toFixed(1)}), ${loadavg()[0].toFixed(1)} at the end.
`;
if (!process.env.MODES && !process.env.BURST) writeFileSync(new URL('./results/browser-grid-churn.md', import.meta.url), out);
console.log(out);
