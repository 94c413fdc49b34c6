// obniz on one real redis-server: assign 10,000 devices over 50 slaves, then
// rebalance after 10 more slaves join (goal: each under 2 s), move a dead
// slave's devices, and a manager's whole first sync of a 10,000-device file.
// For scale, obniz-app-sdk's way (one script call per device, KEYS to find the
// slaves and lists), written here from its description.
// Run: npx tsc -p . && node bench/obniz.mjs
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import plugin from '../dist/plugins/obniz/index.js';
import { Manager } from '../dist/plugins/obniz/roles/manager.js';
import { assignDevices, relocateAll, relocateSlave, touchSlave } from '../dist/plugins/obniz/store.js';
import { startRedis } from '../dist/test/support/redis.js';

const DEVICES = 10_000;
const SLAVES = 50;
const JOINING = 10;

const loadBefore = loadavg()[0];
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const ctxFor = (keyPrefix, config = {}) => scenarioContext({ plugin, backend, keyPrefix, signal: new AbortController().signal, config: { discover: false, ...config } });
const devices = Array.from({ length: DEVICES }, (_, i) => ({
  id: `${String(Math.floor(i / 10000)).padStart(4, '0')}-${String(i % 10000).padStart(4, '0')}`,
  hardware: 'blewifi_gw2',
  os: 'obnizos',
  osVersion: '3.5.0',
  configs: JSON.stringify({ interval: 60, threshold: 28.5, label: `room ${i}` }),
  user: { id: `user-${i % 97}`, name: 'tenant' },
}));
const names = (n, from = 0) => Array.from({ length: n }, (_, i) => `slave-${String(from + i).padStart(3, '0')}`);
const time = async (fn) => {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
};
const spread = async (ctx, list) => {
  const counts = await Promise.all(list.map((name) => backend.send(['HLEN', ctx.keys.workers({ name })])));
  return { min: Math.min(...counts), max: Math.max(...counts), total: counts.reduce((a, b) => a + b, 0) };
};
const rows = [];

// 1. assign 10,000 devices over 50 slaves (batches of 500 per script call)
const ctx = ctxFor('{bench}:');
for (const name of names(SLAVES)) await touchSlave(ctx, name);
const assign = await time(() => assignDevices(ctx, devices));
const afterAssign = await spread(ctx, names(SLAVES));
if (afterAssign.total !== DEVICES || assign.value.some((r) => !r.ok)) throw new Error('assignment incomplete');
rows.push(['assign 10,000 devices over 50 slaves (20 script calls of 500)', assign.ms, `${afterAssign.min}–${afterAssign.max} per slave`]);

// 2. 10 more slaves join: doAllRelocate
for (const name of names(JOINING, SLAVES)) await touchSlave(ctx, name);
const rebalance = await time(() => relocateAll(ctx));
const afterRebalance = await spread(ctx, names(SLAVES + JOINING));
if (afterRebalance.max - afterRebalance.min > 1) throw new Error('not within 1');
rows.push([`rebalance after ${JOINING} slaves join (doAllRelocate, one script)`, rebalance.ms, `${rebalance.value.moved} moved; ${afterRebalance.min}–${afterRebalance.max} per slave`]);

// 3. a slave dies: its devices move
const dead = names(1)[0];
await backend.send(['DEL', ctx.keys.slaveHeartbeat({ name: dead })]);
const deadMove = await time(() => relocateSlave(ctx, dead));
const afterDeath = await spread(ctx, names(SLAVES + JOINING - 1, 1));
rows.push(['a dead slave\'s devices move to the other 59 (one script)', deadMove.ms, `${deadMove.value.length} moved; ${afterDeath.min}–${afterDeath.max} per slave`]);

// 4. a manager's first sync of a 10,000-device file over 50 slaves
const dir = mkdtempSync(join(tmpdir(), 'obniz-bench-'));
const file = join(dir, 'devices.json');
writeFileSync(file, JSON.stringify(devices));
const managerCtx = ctxFor('{bench-m}:', { devices: file, instanceName: 'bench-manager' });
for (const name of names(SLAVES)) await touchSlave(managerCtx, name);
const manager = new Manager(managerCtx);
const sync = await time(() => manager.start());
await manager.stop();
const afterSync = await spread(managerCtx, names(SLAVES));
if (afterSync.total !== DEVICES) throw new Error('manager sync incomplete');
rows.push(['manager start: read the 10,000-device file, diff, assign, synchronize', sync.ms, `${afterSync.min}–${afterSync.max} per slave`]);

// 5. obniz-app-sdk's way, for scale: one call per device, KEYS for the slaves and lists
const sdkLua = `
local slaves = redis.call('KEYS', ARGV[1] .. 'slave:*:heartbeat')
local lists = redis.call('KEYS', ARGV[1] .. 'workers:*')
if #slaves == 0 then return {err='NO_ACCEPTABLE_WORKER'} end
for _, key in ipairs(lists) do
  if redis.call('HEXISTS', key, ARGV[2]) == 1 then return {err='ALREADY_INSTALLED'} end
end
local best, bestCount
for _, key in ipairs(slaves) do
  local name = string.sub(key, #ARGV[1] + 7, -11)
  local count = redis.call('HLEN', ARGV[1] .. 'workers:' .. name)
  if not best or count <= bestCount then best, bestCount = name, count end
end
redis.call('HSET', ARGV[1] .. 'workers:' .. best, ARGV[2], ARGV[3])
return best`;
const sdk = { name: 'sdk-assign', lua: sdkLua, sha: createHash('sha1').update(sdkLua).digest('hex') };
const sdkCtx = ctxFor('{bench-sdk}:');
for (const name of names(SLAVES)) await touchSlave(sdkCtx, name);
const sdkRun = await time(async () => {
  for (const d of devices) {
    await backend.evalScript(sdk, [], ['{bench-sdk}:', d.id, JSON.stringify({ install: d, instanceName: '', updatedMillisecond: Date.now() })]);
  }
});
const afterSdk = await spread(sdkCtx, names(SLAVES));
rows.push(['for scale: obniz-app-sdk\'s way, one call per device with KEYS (sequential, as the SDK does)', sdkRun.ms, `${afterSdk.min}–${afterSdk.max} per slave`]);

await backend.close();
await redis.stop();

const table = [
  '| step | time (ms) | result |',
  '|---|---:|---|',
  ...rows.map(([step, ms, result]) => `| ${step} | ${ms.toFixed(0)} | ${result} |`),
].join('\n');
const load = `1-minute load average ${loadBefore.toFixed(1)} before the run, ${loadavg()[0].toFixed(1)} after (2 cores; other work shares the machine)`;
const out = `# obniz: assignment and rebalancing on redis-server (ioredis, one client) ${new Date().toISOString().slice(0, 10)}\n\nGoal: assigning 10,000 devices over 50 slaves, and rebalancing after 10 more join, each under 2 s.\n\n${table}\n\n${load}.\n`;
writeFileSync(new URL('./results/obniz.md', import.meta.url), out);
console.log(out);
