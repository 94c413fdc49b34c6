// Time to first page, in one run on real Redis and Chromium: connect, open a
// page and load a local one, through coord's proxy vs straight to the same
// kind of browser without the grid (goal: ≤ 1.05× straight).
//  - Playwright: chromium.connect through the proxy vs chromium.connect to the
//    worker's own browser server (launchServer, the same flags);
//  - CDP, with puppeteer-core and with Playwright's connectOverCDP: /cdp through
//    the proxy (a browser process of the client's own, from the worker's warm
//    spare) vs a Chromium with a DevTools port launched for the client with the
//    same flags (its launch and 3 s to settle untimed, like the spare's); for reference also
//    straight to the worker's CDP port, through a second proxy that relays
//    through that port (cdpDirect=false, the way to a worker on another host),
//    and to one shared running Chromium (what clients get without isolation);
//  - for reference, a reused local browser's newContext + newPage + goto (what a
//    test runner does between tests when it owns the browser).
// Cycles are interleaved so drift on the machine affects every way alike.
// Run: npx tsc -p . && node bench/browser-grid-first-page.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { createBackend } from '../dist/adapters/index.js';
import { chromiumFlags, systemChromium } from '../dist/plugins/browser-grid/worker/browser.js';
import { coord } from '../dist/test/support/cli.js';
import { freePort, startRedis } from '../dist/test/support/redis.js';

const loadBefore = loadavg()[0].toFixed(1);
const CYCLES = Number(process.env.CYCLES ?? 30);
const WARMUP = 3;
const prefix = '{fp}:';

const page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>first page</title><h1>hello</h1>'));
await new Promise((resolve) => page.listen(0, '127.0.0.1', resolve));
const pageUrl = `http://127.0.0.1:${page.address().port}/`;

const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const port = await freePort();
const common = ['--redis', redis.url, '--prefix', prefix, '--set', 'browser-grid.maxConcurrentSessions=50', '--set', 'browser-grid.maxLifetimeSessions=100000'];
const worker = coord(['run', '--plugin', 'browser-grid', '--role', 'worker', '--set', 'browser-grid.workers=1', ...common]);
const proxy = coord(['run', '--plugin', 'browser-grid', '--role', 'proxy', '--set', `browser-grid.port=${port}`, ...common]);
const relayPort = await freePort();
const relayProxy = coord(['run', '--plugin', 'browser-grid', '--role', 'proxy', '--set', `browser-grid.port=${relayPort}`, '--set', 'browser-grid.cdpDirect=false', '--set', 'browser-grid.reaperInProxy=false', ...common]);
await Promise.all([worker, proxy, relayProxy].map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
const [workerKey] = await backend.send(['KEYS', `${prefix}worker:chromium:*`]);
const [straightPw, workerCdp] = await backend.send(['HMGET', workerKey, 'wsEndpoint', 'cdpEndpoint']);
const gridPw = `ws://127.0.0.1:${port}/?browser=chromium`;
const gridCdp = `ws://127.0.0.1:${port}/cdp`;

/** A Chromium with a DevTools port, launched as the worker's CDP front launches its browsers. */
async function launchDevtools() {
  const profile = mkdtempSync(join(tmpdir(), 'coord-bench-cdp-'));
  const child = spawn(systemChromium(), ['--headless=new', '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0', '--remote-allow-origins=*',
    `--user-data-dir=${profile}`, ...chromiumFlags, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const ws = await new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (c) => {
      text += c;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`chromium exited with ${code}: ${text}`)));
  });
  child.stderr.resume();
  return {
    ws,
    async kill() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      // Chromium's helpers may still write for a moment after it exits (ENOTEMPTY): not waited for
      void rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch(() => {});
    },
  };
}
const shared = await launchDevtools();
const local = await chromium.launch({ executablePath: systemChromium(), args: [...chromiumFlags], chromiumSandbox: false });
/** The fresh Chromium the next "launched for it" cycle connects to, launched untimed before it. */
let fresh;
/** A Chromium keeps starting helper processes for a moment after its DevTools port is up; the worker's spare has had longer. */
const SETTLE_MS = 3000;
/** The grid's CDP ways wait as long: the spare the last CDP client's leaving started is then as settled. */
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const launchFresh = async () => {
  fresh = await launchDevtools();
  await new Promise((r) => setTimeout(r, SETTLE_MS));
};

// Each way: time to first page (connect + new page + goto); cleanup is untimed. `prep` runs
// untimed before it. Every CDP way's browser has had the same 3 s (at least) since its launch
// began: a fresh one launched for it, or the worker's spare (launched when the last CDP client
// left), as it is for clients that do not arrive back to back.
const ways = {
  'Playwright, through the grid': { run: () => playwrightFirstPage(gridPw) },
  'puppeteer-core, through the grid (/cdp)': { prep: settle, run: () => puppeteerFirstPage(gridCdp, true) },
  'Playwright, straight to a browser server': { run: () => playwrightFirstPage(straightPw) },
  'puppeteer-core, straight to a Chromium launched for it': { prep: launchFresh, run: () => puppeteerFirstPage(fresh.ws, true) },
  'connectOverCDP, through the grid (/cdp)': { prep: settle, run: () => overCdpFirstPage(gridCdp, true) },
  'reused local browser: newContext + newPage': { run: () => reusedFirstPage() },
  'connectOverCDP, straight to a Chromium launched for it': { prep: launchFresh, run: () => overCdpFirstPage(fresh.ws, false) },
  'puppeteer-core, straight to a shared running Chromium (not isolated)': { run: () => puppeteerFirstPage(shared.ws, false) },
  "puppeteer-core, straight to the worker's CDP port": { prep: settle, run: () => puppeteerFirstPage(workerCdp, true) },
  "puppeteer-core, through the grid relayed by the worker's CDP port (cdpDirect=false)": { prep: settle, run: () => puppeteerFirstPage(`ws://127.0.0.1:${relayPort}/cdp`, true) },
};

async function playwrightFirstPage(url) {
  const started = performance.now();
  const browser = await chromium.connect(url);
  const p = await browser.newPage();
  await p.goto(pageUrl);
  const ms = performance.now() - started;
  await browser.close();
  return ms;
}
async function puppeteerFirstPage(url, ownBrowser) {
  const started = performance.now();
  const browser = await puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null });
  const p = await browser.newPage();
  await p.goto(pageUrl);
  const ms = performance.now() - started;
  if (ownBrowser) {
    await browser.close();
  } else {
    await p.close();
    await browser.disconnect();
  }
  return ms;
}
async function overCdpFirstPage(url, ownBrowser) {
  const started = performance.now();
  const browser = await chromium.connectOverCDP(url);
  const context = browser.contexts()[0];
  const p = await context.newPage();
  await p.goto(pageUrl);
  const ms = performance.now() - started;
  if (!ownBrowser) await p.close();
  await browser.close(); // over CDP to a browser it did not launch, close() only disconnects
  return ms;
}
async function reusedFirstPage() {
  const started = performance.now();
  const context = await local.newContext();
  const p = await context.newPage();
  await p.goto(pageUrl);
  const ms = performance.now() - started;
  await context.close();
  return ms;
}

// ONLY=cdp or ONLY=playwright,reused (substrings of the ways' names) runs some of them, to look into one
const only = process.env.ONLY?.toLowerCase().split(',').filter(Boolean);
if (only) for (const name of Object.keys(ways)) if (!only.some((part) => name.toLowerCase().includes(part))) delete ways[name];
const GAP_MS = 1000;
const timings = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
/** The 1-minute load average at the start of each measured cycle: how busy the machine was. */
const loads = [];
for (let i = 0; i < WARMUP + CYCLES; i++) {
  if (i >= WARMUP) loads.push(loadavg()[0]);
  for (const [name, way] of Object.entries(ways)) {
    if (way.prep) await way.prep();
    await new Promise((r) => setTimeout(r, GAP_MS));
    const ms = await way.run().catch((err) => {
      // What the grid's processes said about it (e.g. the worker's reason for a 503 on /cdp) before the bench stops.
      const said = [...worker.lines, ...proxy.lines, ...relayProxy.lines].filter((l) => l.level >= 40).slice(-5);
      throw new Error(`${name}, cycle ${i}: ${err.message ?? err}; the grid's last warnings: ${JSON.stringify(said)}`);
    });
    await fresh?.kill();
    fresh = undefined;
    if (i >= WARMUP) timings[name].push(ms);
  }
  // progress on stderr (the table goes to stdout): a run takes ~10 minutes
  process.stderr.write(`cycle ${i + 1}/${WARMUP + CYCLES}${i < WARMUP ? ' (warm-up)' : ''}, load ${loadavg()[0].toFixed(1)}\n`);
}
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const median = (xs) => quantile(xs, 0.5);
const m = Object.fromEntries(Object.entries(timings).map(([k, xs]) => [k, { median: median(xs), p25: quantile(xs, 0.25), p75: quantile(xs, 0.75), p90: quantile(xs, 0.9) }]));
const resets = [...proxy.lines, ...relayProxy.lines].filter((l) => /dial failed|ECONNRESET/.test(JSON.stringify(l))).length;

await local.close();
await shared.kill();
for (const p of [proxy, relayProxy, worker]) p.kill('SIGTERM');
await Promise.all([proxy.exited, relayProxy.exited, worker.exited]);
await backend.close();
await redis.stop();
page.close();

const row = (name) => `| ${name} | ${m[name].median.toFixed(1)} ms | ${m[name].p25.toFixed(1)}–${m[name].p75.toFixed(1)} ms | ${m[name].p90.toFixed(1)} ms |`;
/** Both the ratio of the medians and the median of the ratios within each cycle (robust to the machine's load drifting between cycles), with the middle half of those. */
const ratio = (grid, straight) => {
  if (!m[grid] || !m[straight]) return '';
  const paired = timings[grid].map((g, i) => g / timings[straight][i]);
  return `| ${grid} ÷ ${straight} | ${(m[grid].median / m[straight].median).toFixed(2)}× | ${median(paired).toFixed(2)}× | ${quantile(paired, 0.25).toFixed(2)}–${quantile(paired, 0.75).toFixed(2)}× |`;
};
const out = `# Time to first page, ${new Date().toISOString().slice(0, 10)} (one run; ${CYCLES} interleaved cycles after ${WARMUP} warm-up; connect + new page + goto a local page)

| way | median | middle half (p25–p75) | p90 |
|---|---:|---:|---:|
${Object.keys(ways).map(row).join('\n')}

| ratio (goal ≤ 1.05×) | of the medians | median of per-cycle ratios | their middle half |
|---|---:|---:|---:|
${[
  ratio('Playwright, through the grid', 'Playwright, straight to a browser server'),
  ratio('puppeteer-core, through the grid (/cdp)', 'puppeteer-core, straight to a Chromium launched for it'),
  ratio('connectOverCDP, through the grid (/cdp)', 'connectOverCDP, straight to a Chromium launched for it'),
  ratio('puppeteer-core, through the grid (/cdp)', "puppeteer-core, straight to the worker's CDP port"),
  ratio("puppeteer-core, through the grid relayed by the worker's CDP port (cdpDirect=false)", 'puppeteer-core, straight to a Chromium launched for it'),
  ratio('puppeteer-core, through the grid (/cdp)', 'puppeteer-core, straight to a shared running Chromium (not isolated)'),
  ratio('Playwright, through the grid', 'reused local browser: newContext + newPage'),
]
  .filter(Boolean) // ONLY= leaves some ways out
  .join('\n')}

Dial failures logged by the proxy during the run: ${resets}. Machine: ${cpus().length} cores shared with other work; 1-minute load average ${loadBefore} at the start, ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} over the measured cycles (median ${median(loads).toFixed(1)}), ${loadavg()[0].toFixed(1)} at the end.
`;
if (!only) writeFileSync(new URL('./results/browser-grid-first-page.md', import.meta.url), out);
console.log(out);
