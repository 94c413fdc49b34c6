// Selections per second at 10, 100, 1,000 and 5,000 registered workers: coord's
// selectWorker against playwright-distributed v0.3.0's selector (bench/pd-selector.lua,
// its algorithm with the same Redis calls; PD_SELECTOR=FILE runs another file, such as
// the original), on the same redis-server and the same workers: one fleet registered by
// coord's touchWorker under no key prefix (the original selector uses fixed key names).
// One client, sequential EVALSHA. Each round registers every fleet afresh and runs both
// scripts in alternating 50 ms slices (the machine's load, which other work changes from
// moment to moment, slows both alike); the redis-server's own time per call (INFO
// commandstats) and the client's CPU per call are recorded beside the rate.
// Run: npm run build && node bench/selection.mjs [rounds=5] [seconds=2]
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import plugin from '../dist/plugins/browser-grid/index.js';
import { startRedis } from '../dist/test/support/redis.js';

const SIZES = [10, 100, 1000, 5000];
const ROUNDS = Number(process.argv[2] ?? 5);
const SECONDS = Number(process.argv[3] ?? 2);
const pdFile = process.env.PD_SELECTOR ?? new URL('./pd-selector.lua', import.meta.url);
const pdLua = readFileSync(pdFile, 'utf8');
const pd = { name: 'pd-selector', lua: pdLua, sha: createHash('sha1').update(pdLua).digest('hex') };

const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const limits = { maxConcurrentSessions: 1_000_000, maxLifetimeSessions: 999_999 };
const ctx = scenarioContext({ plugin, backend, keyPrefix: '', signal: new AbortController().signal, config: limits });
const loads = [readFileSync('/proc/loadavg', 'utf8').trim()];

async function fleet(size, now) {
  await backend.send(['FLUSHALL']);
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
}

const SLICE_MS = 50;

/** The redis-server's µs per EVALSHA and this process's CPU µs per call, over `ms` of one script alone. */
async function cost(call, ms) {
  await backend.send(['CONFIG', 'RESETSTAT']);
  let n = 0;
  const cpu = process.cpuUsage();
  const end = performance.now() + ms;
  while (performance.now() < end) await call(n++);
  const used = process.cpuUsage(cpu);
  const stats = String(await backend.send(['INFO', 'commandstats']));
  return { usec: Number(/cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(stats)?.[1]), clientUsec: (used.user + used.system) / n };
}

/**
 * Calls per second of each script over SECONDS each, in alternating slices of SLICE_MS (coord, then
 * playwright-distributed's, then the other way round): a machine whose load changes from moment to
 * moment slows both alike. Then each one's cost per call, alone.
 */
async function measure(calls) {
  for (const call of Object.values(calls)) for (let i = 0; i < 1000; i++) await call(i); // warm: the first calls run unoptimised client code
  const done = { coord: 0, pd: 0 };
  const spent = { coord: 0, pd: 0 };
  for (let slice = 0; slice < (SECONDS * 1000) / SLICE_MS; slice++) {
    for (const who of slice % 2 ? ['pd', 'coord'] : ['coord', 'pd']) {
      const started = performance.now();
      const end = started + SLICE_MS;
      let n = 0;
      while (performance.now() < end) await calls[who](done[who] + n++);
      done[who] += n;
      spent[who] += performance.now() - started;
    }
  }
  const out = {};
  for (const who of ['coord', 'pd']) out[who] = { perSecond: (done[who] * 1000) / spent[who], ...(await cost(calls[who], 300)) };
  return out;
}

// called as the proxy's admission.ts calls it: keys built once per browser type and queue, the arguments per call
const type = { browserType: 'chromium' };
const selectKeys = { active: ctx.keys.activeConnections(), lifetime: ctx.keys.lifetimeConnections(), workerIndex: ctx.keys.workerIndex(type), freeIndex: ctx.keys.freeIndex(type),
  queue: ctx.keys.queue({ ...type, version: '1.65' }), leases: ctx.keys.leases({ proxyId: 'bench' }), versions: ctx.keys.versions(type) };
const coordCall = (now) => (i) => ctx.scripts.run('selectWorker', {
  keys: selectKeys,
  args: { nowMs: now, staleMs: 3_600_000, maxConcurrent: limits.maxConcurrentSessions, maxLifetime: limits.maxLifetimeSessions, connectionId: `c${i}`, ticket: '', exclude: '', version: '1.65', protocol: 'playwright' },
});
const pdCall = () => backend.evalScript(pd, [], [limits.maxConcurrentSessions, limits.maxLifetimeSessions, 'chromium']);

const results = new Map(SIZES.map((s) => [s, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const size of SIZES) {
    const now = Date.now();
    await fleet(size, now);
    const r = await measure({ coord: coordCall(now), pd: pdCall });
    results.get(size).push(r);
    console.error(`round ${round}, ${size} workers: coord ${r.coord.perSecond.toFixed(0)}/s (${r.coord.usec} µs in Redis, ${r.coord.clientUsec.toFixed(1)} µs client CPU), playwright-distributed ${r.pd.perSecond.toFixed(0)}/s (${r.pd.usec} µs, ${r.pd.clientUsec.toFixed(1)} µs) → ${(r.coord.perSecond / r.pd.perSecond).toFixed(2)}×`);
  }
  loads.push(readFileSync('/proc/loadavg', 'utf8').trim());
}
await backend.close();
await redis.stop();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const span = (xs, digits = 0) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
const rows = SIZES.map((size) => {
  const rs = results.get(size);
  const c = rs.map((r) => r.coord.perSecond);
  const p = rs.map((r) => r.pd.perSecond);
  const ratio = rs.map((r) => r.coord.perSecond / r.pd.perSecond);
  const cu = rs.map((r) => r.coord.usec);
  const pu = rs.map((r) => r.pd.usec);
  const cc = rs.map((r) => r.coord.clientUsec);
  const pc = rs.map((r) => r.pd.clientUsec);
  return `| ${size} | ${median(c).toFixed(0)} (${span(c)}) | ${median(p).toFixed(0)} (${span(p)}) | ${median(ratio).toFixed(2)}× (${span(ratio, 2)}) | ${median(cu).toFixed(1)} / ${median(cc).toFixed(1)} | ${median(pu).toFixed(1)} / ${median(pc).toFixed(1)} |`;
});
const out = [
  `# Worker selection: coord's selectWorker vs playwright-distributed's selector`,
  '',
  `${new Date().toISOString().slice(0, 16)}Z, \`node bench/selection.mjs ${ROUNDS} ${SECONDS}\`: ${ROUNDS} rounds, ${SECONDS} s per script per fleet per round in alternating ${SLICE_MS} ms slices, one client`,
  `sending EVALSHA after EVALSHA to one redis-server on loopback; both scripts select among the same workers (registered afresh each round).`,
  `playwright-distributed's selector: ${process.env.PD_SELECTOR ? process.env.PD_SELECTOR : 'bench/pd-selector.lua (v0.3.0\'s algorithm, same Redis calls)'}.`,
  'Medians over the rounds, (min–max) beside them. "µs per call" is the redis-server\'s own time (INFO commandstats) / the client process\'s CPU (process.cpuUsage), per call.',
  `Machine: 2 cores shared with other work (load average before and after each round: ${loads.map((l) => l.split(' ').slice(0, 3).join(' ')).join(' → ')}).`,
  '',
  '| workers | coord (/s) | playwright-distributed (/s) | ratio | coord µs per call: Redis / client | playwright-distributed µs per call: Redis / client |',
  '|---:|---:|---:|---:|---:|---:|',
  ...rows,
  '',
].join('\n');
writeFileSync(new URL('./results/selection.md', import.meta.url), out);
console.log(out);
