// Selections per second at 10, 100, 1000 and 5000 registered workers: coord's
// indexed selectWorker against playwright-distributed's way (reading both counter hashes
// whole on every call), on one real redis-server, in one run.
// Run: npx tsc -p . && node bench/selection.mjs
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import plugin from '../dist/plugins/browser-grid/index.js';
import { startRedis } from '../dist/test/support/redis.js';

const SIZES = [10, 100, 1000, 5000];
const SECONDS = 2;
const baselineLua = readFileSync(new URL('./baseline-selector.lua', import.meta.url), 'utf8');
const baseline = { name: 'baseline', lua: baselineLua, sha: createHash('sha1').update(baselineLua).digest('hex') };

const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const now = Date.now();
const limits = { maxConcurrentSessions: 1_000_000, maxLifetimeSessions: 999_999 };

async function fleet(size, prefix) {
  const ctx = scenarioContext({ plugin, backend, keyPrefix: prefix, signal: new AbortController().signal, config: limits });
  const batch = [];
  for (let i = 0; i < size; i++) {
    const workerId = `w${i}`;
    batch.push(ctx.scripts.run('touchWorker', {
      keys: { worker: { browserType: 'chromium', workerId }, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
      args: { ref: `chromium:${workerId}`, nowMs: now, staleMs: 3_600_000, maxConcurrent: limits.maxConcurrentSessions, maxLifetime: limits.maxLifetimeSessions, ttl: 3600,
        fields: ['id', workerId, 'browserType', 'chromium', 'wsEndpoint', `ws://127.0.0.1:1/${workerId}`, 'status', 'available', 'lastHeartbeat', Math.floor(now / 1000), 'version', '1.65.1'] },
    }));
    if (batch.length === 200) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  return ctx;
}

async function rate(call) {
  for (let i = 0; i < 20; i++) await call(i);
  let n = 0;
  const end = performance.now() + SECONDS * 1000;
  while (performance.now() < end) await call(n++);
  return n / SECONDS;
}

const rows = [];
for (const size of SIZES) {
  const ctx = await fleet(size, `{bench${size}}:`);
  const ours = await rate((i) => ctx.scripts.run('selectWorker', {
    keys: { active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, queue: { browserType: 'chromium', version: '1.65' }, leases: { proxyId: 'bench' }, versions: { browserType: 'chromium' } },
    args: { nowMs: now, staleMs: 3_600_000, maxConcurrent: limits.maxConcurrentSessions, maxLifetime: limits.maxLifetimeSessions, connectionId: `c${i}`, ticket: '', exclude: '', version: '1.65', protocol: 'playwright' },
  }));
  const pd = await rate(() => backend.evalScript(baseline, [ctx.keys.activeConnections(), ctx.keys.lifetimeConnections()],
    ['chromium', limits.maxConcurrentSessions, limits.maxLifetimeSessions, now, 3_600_000, `{bench${size}}:worker:`]));
  rows.push({ size, ours, pd });
  console.error(`${size} workers: coord ${ours.toFixed(0)}/s, playwright-distributed's way ${pd.toFixed(0)}/s`);
}
await backend.close();
await redis.stop();

const table = [
  '| workers | coord selectWorker (/s) | playwright-distributed\'s selector (/s) | ratio |',
  '|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.size} | ${r.ours.toFixed(0)} | ${r.pd.toFixed(0)} | ${(r.ours / r.pd).toFixed(1)}× |`),
].join('\n');
const out = `# Worker selection, one client, sequential EVALSHA on redis-server ${new Date().toISOString().slice(0, 10)}\n\n${table}\n`;
writeFileSync(new URL('./results/selection.md', import.meta.url), out);
console.log(out);
