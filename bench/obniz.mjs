// obniz on one real redis-server, through the manager's path: a device-list file
// of 10,000 devices over 50 slaves and of 100,000 over 500 (the manager's first
// sync: read the file, diff against Redis, plan, assign, synchronize, until every
// device is in a list), then a sync with nothing changed (incremental
// reads), every slave claiming its devices, and a dead slave's devices moving.
// Rounds alternate the two sizes (paired). Reference: obniz-app-sdk's documented
// assignment, one script call per device that finds slaves and lists with KEYS,
// written here from its description: all 10,000 at 10k/50, a sample at 100k/500
// (its per-device time times 100,000: stated as an estimate).
// SLOWLOG logs every command of coord's part (slowlog-log-slower-than 0, read
// and reset after each round): every coord script call must stay under
// BOUND_MS. Then the control: a Lua loop of fixed work (no Redis calls, no
// allocation) sized to coord's median call, run as many times: on a VM its
// rare long calls are the host's, and no script can be timed below them.
// The slaves beat from this process, whose event loop the in-process manager holds up for
// seconds at a time: their heartbeat TTL and deadAfter are 120 s and 180 s (not 20 s and 30 s), so
// a loaded machine cannot make them look dead mid-sync (NO_ACCEPTABLE_WORKER). Its redis-server
// is killed on any exit. Larger fleets (1,000,000 devices): bench/scale.mjs obniz.
// Run: npm run build && node bench/obniz.mjs [rounds=3]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import { loadScriptDir } from '../dist/core/scripts.js';
import { silentLogger } from '../dist/core/logger.js';
import plugin from '../dist/plugins/obniz/index.js';
import { Manager } from '../dist/plugins/obniz/roles/manager.js';
import { relocateSlave } from '../dist/plugins/obniz/relocate.js';
import { claimDevices, touchSlave } from '../dist/plugins/obniz/scripts.js';
import { startRedis } from '../dist/test/support/redis.js';
import { killOnExit } from './scale/kit.mjs';

const ROUNDS = Number(process.argv[2] ?? 3);
const BOUND_MS = 2;
const SIZES = [
  { devices: 10_000, slaves: 50 },
  { devices: 100_000, slaves: 500 },
];
const SDK_SAMPLE = 2_000;

const loads = [loadavg()[0]];
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
// redis-server runs first on a core (SCHED_FIFO, as root; else renice -10, else as it is): the machine is shared
// with other sessions' builds and tests, and SLOWLOG should time the scripts, not the server waiting for a core.
// The client (this process) keeps normal priority.
const redisPid = /process_id:(\d+)/.exec(await backend.send(['INFO', 'server']))[1];
killOnExit(Number(redisPid));
let priority = 'normal priority';
for (const [cmd, args, what] of [
  ['chrt', ['-f', '-p', '10', redisPid], 'SCHED_FIFO 10'],
  ['renice', ['-n', '-10', '-p', redisPid], 'nice -10'],
]) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    priority = what;
    break;
  } catch {}
}
const ctxFor = (config = {}) =>
  scenarioContext({ plugin, backend, keyPrefix: '', logger: silentLogger, signal: new AbortController().signal, config: { heartbeatTtl: 120, deadAfter: 180, ...config } });
const deviceList = (n) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${String(Math.floor(i / 10000)).padStart(4, '0')}-${String(i % 10000).padStart(4, '0')}`,
    hardware: 'blewifi_gw2',
    os: 'obnizos',
    osVersion: '3.5.0',
    configs: JSON.stringify({ interval: 60, threshold: 28.5, label: `room ${i}` }),
    user: { id: `user-${i % 97}`, name: 'tenant' },
  }));
const names = (n) => Array.from({ length: n }, (_, i) => `slave-${String(i).padStart(3, '0')}`);
const ms = async (fn) => {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
};
const listed = async (ctx, list) => {
  const counts = await backend.pipeline(list.map((name) => ['HLEN', ctx.keys.workers({ name })]));
  return { min: Math.min(...counts), max: Math.max(...counts), total: counts.reduce((a, b) => a + b, 0) };
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
/** The largest of many (spreading hundreds of thousands of arguments overflows the stack). */
const largest = (xs) => xs.reduce((a, b) => Math.max(a, b), 0);
const dir = mkdtempSync(join(tmpdir(), 'obniz-bench-'));

/** One round of one size: returns the times (ms) of each step. */
async function round({ devices, slaves }) {
  await backend.send(['FLUSHALL']);
  const file = join(dir, `devices-${devices}.json`);
  writeFileSync(file, JSON.stringify(deviceList(devices)));
  const ctx = ctxFor({ devices: file, instanceName: 'bench-manager' });
  const fleet = names(slaves);
  // the slaves beat as slave processes would (every few seconds), so none dies during a long step
  const beatAll = () => Promise.all(fleet.map((name) => touchSlave(ctx, name)));
  await beatAll();
  let inFlight = Promise.resolve();
  const beating = setInterval(() => (inFlight = beatAll().then(() => {}, () => {})), 3000);
  const manager = new Manager(ctx);
  const first = await ms(() => manager.start());
  const after = await listed(ctx, fleet);
  if (after.total !== devices) throw new Error(`manager sync incomplete: ${after.total} of ${devices}`);
  await manager.syncNow(); // re-reads the lists the assignment changed (all of them)
  const second = await ms(() => manager.syncNow());
  await manager.stop();
  const claims = await ms(async () => {
    for (const name of fleet) {
      const ids = await backend.send(['HKEYS', ctx.keys.workers({ name })]);
      const got = await claimDevices(ctx, name, ids);
      if (got.some((c) => c.status !== 'ok')) throw new Error('claim refused');
    }
  });
  clearInterval(beating);
  await inFlight;
  const dead = fleet[0];
  await Promise.all(fleet.slice(1).map((name) => touchSlave(ctx, name)));
  await backend.send(['DEL', ctx.keys.slaveHeartbeat({ name: dead })]);
  const move = await ms(() => relocateSlave(ctx, dead));
  const afterMove = await listed(ctx, fleet.slice(1));
  if (afterMove.total !== devices) throw new Error('dead-slave move incomplete');
  return { first: first.ms, second: second.ms, claims: claims.ms, move: move.ms, moved: move.value.length, spread: `${after.min}–${after.max}`, spreadAfterMove: `${afterMove.min}–${afterMove.max}` };
}

// ---- coord, paired rounds, with SLOWLOG timing every call
const scriptNames = new Map(loadScriptDir(plugin.scripts, plugin.contract).map((d) => [d.sha, d.name]));
/** O(1) commands: no work of theirs takes a millisecond, so their longest time is the host's pause, not Redis's work. */
const CONSTANT = new Set(['GET', 'SET', 'HGET', 'HLEN', 'HEXISTS', 'EXISTS', 'ZSCORE', 'SISMEMBER', 'EXPIRE', 'PEXPIRE', 'PING', 'INCR']);
await backend.send(['CONFIG', 'SET', 'slowlog-log-slower-than', '0']);
await backend.send(['CONFIG', 'SET', 'slowlog-max-len', '1000000']);
await backend.send(['SLOWLOG', 'RESET']);
/** Every command of coord's part: its time in Redis (ms), its name, and the script's name for EVALSHA/EVAL. */
const calls = [];
async function readCalls() {
  const log = await backend.send(['SLOWLOG', 'GET', String(await backend.send(['SLOWLOG', 'LEN']))]);
  await backend.send(['SLOWLOG', 'RESET']);
  for (const [, , micros, args] of log) {
    const command = String(args[0]).toUpperCase();
    // the bench's own FLUSHALL between rounds and its SLOWLOG reads are not coord's
    if (command === 'FLUSHALL' || command === 'SLOWLOG') continue;
    const script = command === 'EVALSHA' ? scriptNames.get(String(args[1])) ?? 'other' : command === 'EVAL' ? 'EVAL' : undefined;
    calls.push({ ms: micros / 1000, command, script });
  }
}
const results = SIZES.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (let s = 0; s < SIZES.length; s++) {
    results[s].push(await round(SIZES[s]));
    await readCalls();
    console.log(`round ${r + 1} ${SIZES[s].devices}/${SIZES[s].slaves}:`, JSON.stringify(results[s].at(-1)));
  }
}
// ---- the control: the same number of calls of a script whose work never varies
const loop = 'local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + i end return x';
const control = { name: 'control', lua: loop, sha: createHash('sha1').update(loop).digest('hex') };
const controlTimes = async (n, count) => {
  await backend.send(['SLOWLOG', 'RESET']);
  for (let i = 0; i < count; i++) await backend.evalScript(control, [], [n]);
  const log = await backend.send(['SLOWLOG', 'GET', String(await backend.send(['SLOWLOG', 'LEN']))]);
  return log.filter(([, , , args]) => String(args[0]).toUpperCase() === 'EVALSHA').map(([, , micros]) => micros / 1000);
};
const scriptCalls = calls.filter((c) => c.script);
const probe = 20_000;
const probeMs = median(await controlTimes(probe, 200));
const controlIterations = Math.max(1, Math.round((probe * median(scriptCalls.map((c) => c.ms))) / probeMs));
const controlCalls = await controlTimes(controlIterations, scriptCalls.length);
console.log(`control: ${controlCalls.length} calls of a ${controlIterations}-iteration loop`);
await backend.send(['CONFIG', 'SET', 'slowlog-log-slower-than', '1000']);
const coordMaxMs = largest(scriptCalls.map((c) => c.ms));
const overBound = scriptCalls.filter((c) => c.ms > BOUND_MS);
const constantCalls = calls.filter((c) => CONSTANT.has(c.command));
loads.push(loadavg()[0]);

// ---- obniz-app-sdk's way: one call per device, KEYS for the slaves and lists (bare keys, as the SDK)
const sdkLua = `
local slaves = redis.call('KEYS', 'slave:*:heartbeat')
local lists = redis.call('KEYS', 'workers:*')
if #slaves == 0 then return {err='NO_ACCEPTABLE_WORKER'} end
for _, key in ipairs(lists) do
  if redis.call('HEXISTS', key, ARGV[1]) == 1 then return {err='ALREADY_INSTALLED'} end
end
local best, bestCount
for _, key in ipairs(slaves) do
  local name = string.sub(key, 7, -11)
  local count = redis.call('HLEN', 'workers:' .. name)
  if not best or count <= bestCount then best, bestCount = name, count end
end
redis.call('HSET', 'workers:' .. best, ARGV[1], ARGV[2])
return best`;
const sdk = { name: 'sdk-assign', lua: sdkLua, sha: createHash('sha1').update(sdkLua).digest('hex') };
async function sdkRound({ devices, slaves }, count) {
  await backend.send(['FLUSHALL']);
  const ctx = ctxFor();
  for (const name of names(slaves)) await touchSlave(ctx, name);
  const list = deviceList(devices).slice(0, count);
  const run = await ms(async () => {
    for (const d of list) await backend.evalScript(sdk, [], [d.id, JSON.stringify({ install: d, instanceName: '', updatedMillisecond: Date.now() })]);
  });
  return (run.ms / count) * devices;
}
await backend.send(['SLOWLOG', 'RESET']);
const sdkTimes = [[], []];
for (let r = 0; r < ROUNDS; r++) {
  sdkTimes[0].push(await sdkRound(SIZES[0], SIZES[0].devices));
  sdkTimes[1].push(await sdkRound(SIZES[1], SDK_SAMPLE));
  console.log(`sdk round ${r + 1}:`, sdkTimes.map((t) => t.at(-1).toFixed(0)).join(' / '));
}
const sdkSlow = await backend.send(['SLOWLOG', 'GET', '10000']);
const sdkMaxMs = Math.max(0, ...sdkSlow.map(([, , micros]) => micros / 1000));
loads.push(loadavg()[0]);

await backend.close();
await redis.stop();

// ---- the report
const fmt = (xs) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
const col = (s, key) => results[s].map((r) => r[key]);
const ratio = (key) => median(col(1, key)) / median(col(0, key));
const rows = [
  ['manager first sync: file → every device in a list', 'first'],
  ['manager sync with nothing changed (stamps and lengths read; the list diffed against the cached lists)', 'second'],
  ['every slave claims its devices (claimDevices, one slave after another)', 'claims'],
  ["a dead slave's devices move (relocateSlave)", 'move'],
];
const table = [
  '| step | 10,000 / 50 (ms) | 100,000 / 500 (ms) | ratio |',
  '|---|---:|---:|---:|',
  ...rows.map(([label, key]) => `| ${label} | ${fmt(col(0, key))} | ${fmt(col(1, key))} | ${ratio(key).toFixed(1)}× |`),
  `| reference: obniz-app-sdk's per-device assignment | ${fmt(sdkTimes[0])} | ${fmt(sdkTimes[1])} (estimate: ${SDK_SAMPLE.toLocaleString('en')} devices × 50) | ${(median(sdkTimes[1]) / median(sdkTimes[0])).toFixed(1)}× |`,
  `| coord's first sync faster than the SDK's assignment by | ${(median(sdkTimes[0]) / median(col(0, 'first'))).toFixed(1)}× | ${(median(sdkTimes[1]) / median(col(1, 'first'))).toFixed(1)}× | |`,
].join('\n');
const spread = (xs) => `${xs.length} | ${quantile(xs, 0.5).toFixed(3)} | ${quantile(xs, 0.99).toFixed(3)} | ${quantile(xs, 0.999).toFixed(3)} | ${largest(xs).toFixed(3)} | ${xs.filter((x) => x > BOUND_MS).length} |`;
const byScript = new Map();
for (const c of scriptCalls) byScript.set(c.script, [...(byScript.get(c.script) ?? []), c.ms]);
const timesTable = [
  `| calls (time in Redis) | count | p50 ms | p99 ms | p99.9 ms | longest ms | over ${BOUND_MS} ms |`,
  '|---|---:|---:|---:|---:|---:|---:|',
  `| every coord script call | ${spread(scriptCalls.map((c) => c.ms))}`,
  ...[...byScript].sort(([a], [b]) => a.localeCompare(b)).map(([name, xs]) => `| ${name} | ${spread(xs)}`),
  `| O(1) commands (${[...new Set(constantCalls.map((c) => c.command))].sort().join(', ')}) | ${spread(constantCalls.map((c) => c.ms))}`,
  `| control: a Lua loop of fixed work (${controlIterations} iterations, no Redis call), as many calls | ${spread(controlCalls)}`,
].join('\n');
const controlMaxMs = largest(controlCalls);
const controlOver = controlCalls.filter((x) => x > BOUND_MS).length;
/** How long the host held Redis up at most: an O(1) command or the fixed-work loop (less its own work) took this long. */
const hostPauseMs = Math.max(largest(constantCalls.map((c) => c.ms)), controlMaxMs - median(controlCalls));
// One longest call is one sample; how often calls go over the bound, beside a script whose work never varies, is the test.
const verdict =
  coordMaxMs <= BOUND_MS
    ? 'held by every call'
    : `${overBound.length} of ${scriptCalls.length} coord calls over it (longest ${coordMaxMs.toFixed(2)} ms; p99.9 ` +
      `${quantile(scriptCalls.map((c) => c.ms), 0.999).toFixed(2)} ms); the control, whose work never varies, had ${controlOver} of ` +
      `${controlCalls.length} over it (longest ${controlMaxMs.toFixed(2)} ms), and the host held Redis up for as long as ` +
      `${hostPauseMs.toFixed(2)} ms (an O(1) command, or the control less its median): ` +
      (overBound.length <= Math.max(3, 2 * controlOver)
        ? "coord's calls go over the bound no more often than a script of fixed work does on this machine"
        : "coord's calls go over the bound MORE often than a script of fixed work: look at the scripts");
const out = `# obniz: 10,000 devices over 50 slaves and 100,000 over 500, through the manager (redis-server, ioredis, one client) ${new Date().toISOString().slice(0, 10)}

Goals (issue: 100,000 devices without blocking Redis): 100k/500 within 11× the time of 10k/50 and under 5 s;
no script call over ${BOUND_MS} ms. ${ROUNDS} rounds, the two sizes alternating; median (min–max).

${table}

Dead-slave move: ${results[0][0].moved} devices at 10k/50, ${results[1][0].moved} at 100k/500. Per slave after the first sync:
${results[0][0].spread} (10k/50), ${results[1][0].spread} (100k/500); after the move ${results[0][0].spreadAfterMove} and ${results[1][0].spreadAfterMove}.

SLOWLOG over coord's part (every command, ${ROUNDS * 2} rounds, SLOWLOG at 0 µs; the bench's own FLUSHALL left out):

${timesTable}

Bound ${BOUND_MS} ms: ${verdict}.
SLOWLOG over the SDK reference: ${sdkSlow.length} calls over 1 ms, longest ${sdkMaxMs.toFixed(2)} ms.

redis-server ran at ${priority} (so SLOWLOG times the scripts rather than waits for a core); the client at normal priority.
Machine: 2 cores shared with other work (other sessions' builds and tests ran at the same time); 1-minute load average
${loads.map((l) => l.toFixed(1)).join(' → ')} (start, after coord's part, after the reference).
`;
writeFileSync(new URL('./results/obniz.md', import.meta.url), out);
console.log(out);
