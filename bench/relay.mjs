// The proxy's cost, in one run on real Redis and Chromium:
//  1. a Playwright connect → new page → close cycle through the proxy vs
//     straight to the worker's browser server (goal ≤ 1.10×);
//  2. the proxy process's memory holding 500 idle relayed connections.
// Run: npx tsc -p . && node bench/relay.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';
import { createBackend } from '../dist/adapters/index.js';
import { coord } from '../dist/test/support/cli.js';
import { freePort, startRedis } from '../dist/test/support/redis.js';

const CYCLES = 40;
const IDLE = 500;
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const port = await freePort();
const common = ['--redis', redis.url, '--prefix', '{bench}:', '--set', 'browser-grid.maxConcurrentSessions=1000', '--set', 'browser-grid.maxLifetimeSessions=100000'];
const worker = coord(['run', '--plugin', 'browser-grid', '--role', 'worker', '--set', 'browser-grid.workers=1', ...common]);
const proxy = coord(['run', '--plugin', 'browser-grid', '--role', 'proxy', '--set', `browser-grid.port=${port}`, '--set', 'browser-grid.queueSize=0', ...common]);
await Promise.all([worker, proxy].map((p) => p.waitFor((l) => l.msg === 'ready', 90_000)));
const [workerKey] = await backend.send(['KEYS', '{bench}:worker:chromium:*']);
const direct = await backend.send(['HGET', workerKey, 'wsEndpoint']);
const viaProxy = `ws://127.0.0.1:${port}/?browser=chromium`;

async function cycle(url) {
  const started = performance.now();
  const browser = await chromium.connect(url);
  const page = await browser.newPage();
  await page.close();
  await browser.close();
  return performance.now() - started;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timings = { direct: [], proxy: [] };
for (let i = 0; i < 5; i++) await cycle(direct), await cycle(viaProxy);
for (let i = 0; i < CYCLES; i++) {
  // interleaved, so drift on the machine affects both alike
  timings.direct.push(await cycle(direct));
  timings.proxy.push(await cycle(viaProxy));
}
const d = median(timings.direct);
const p = median(timings.proxy);
console.error(`cycle: direct ${d.toFixed(1)} ms, proxy ${p.toFixed(1)} ms`);

const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proxy.child.pid}/status`, 'utf8'))[1]);
await new Promise((r) => setTimeout(r, 1000));
const before = rssKb();
const sockets = [];
for (let i = 0; i < IDLE; i++) {
  const ws = new WebSocket(viaProxy);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  sockets.push(ws);
}
await new Promise((r) => setTimeout(r, 2000));
const after = rssKb();
console.error(`proxy RSS: ${before} KiB idle, ${after} KiB with ${IDLE} relayed connections`);
for (const ws of sockets) ws.terminate();
proxy.kill('SIGTERM');
worker.kill('SIGTERM');
await Promise.all([proxy.exited, worker.exited]);
await backend.close();
await redis.stop();

const out = `# Proxy overhead, ${new Date().toISOString().slice(0, 10)} (one run; medians of ${CYCLES} interleaved cycles)

| measure | direct to worker | through the proxy | ratio |
|---|---:|---:|---:|
| connect → new page → close | ${d.toFixed(1)} ms | ${p.toFixed(1)} ms | ${(p / d).toFixed(2)}× |

| proxy process RSS | KiB |
|---|---:|
| idle | ${before} |
| ${IDLE} idle relayed connections | ${after} |
| per connection | ${((after - before) / IDLE).toFixed(1)} |
`;
writeFileSync(new URL('./results/relay.md', import.meta.url), out);
console.log(out);
