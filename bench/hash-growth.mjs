// Does Redis growing a hash or a set to a million entries make a script call
// long? One Lua call writes 50 new fields (HSET) or members (SADD) into one key,
// call after call, to 1,100,000 entries; SLOWLOG keeps every call; the calls are
// counted by the key's size when they ran, around each size where Redis doubles
// the table (2^17 … 2^20 entries) and elsewhere. After each call the same connection
// calls the control, a Lua loop of fixed work (no Redis call, no allocation) as long
// as the median write call: it meets the same moments of the machine, so its long
// calls are the host's. redis-server is this bench's own, on a free loopback port,
// at SCHED_FIFO 10 when allowed (as bench/scale.mjs runs it).
//
//   npm run build && node bench/hash-growth.mjs [rounds]     (default 3; writes bench/results/hash-growth.md;
//                                                          ENTRIES=200000 for a shorter run)
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createBackend } from '../dist/adapters/index.js';
import { startRedis } from '../dist/test/support/redis.js';
import { exitWithHelpIfAsked } from './help.mjs';
import { control, controlIterations, cpuSteal, info, killOnExit, largest, prioritise, quantile, stealShare } from './scale/kit.mjs';

exitWithHelpIfAsked(import.meta.url);
const ROUNDS = Number(process.argv[2] ?? 3);
const ENTRIES = Number(process.env.ENTRIES ?? 1_100_000);
const BATCH = 50;
/** A call counts as after a doubling while the key is within this many entries past 2^k. */
const AFTER = 20_000;

const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
killOnExit((await info(backend, 'server')).process_id);
const priority = await prioritise(backend);
const controlSize = await controlIterations(backend, 0.1);
await backend.send(['CONFIG', 'SET', 'slowlog-log-slower-than', '0']);
// Redis 7 logs the commands a script calls too: three entries a call, and the control's
await backend.send(['CONFIG', 'SET', 'slowlog-max-len', String((4 * ENTRIES) / BATCH + 1000)]);

const scripts = {
  hash: `local a = {} for i = 1, #ARGV do a[#a + 1] = ARGV[i]; a[#a + 1] = 's0001' end redis.call('HSET', KEYS[1], unpack(a)) return redis.call('HLEN', KEYS[1])`,
  set: `redis.call('SADD', KEYS[1], unpack(ARGV)) return redis.call('SCARD', KEYS[1])`,
};

/** One round: every call's time (µs) and the key's size after it. */
async function grow(kind) {
  await backend.send(['FLUSHALL']);
  const sha = await backend.send(['SCRIPT', 'LOAD', scripts[kind]]);
  await backend.send(['SLOWLOG', 'RESET']);
  const sizeOf = new Map();
  let id = 0;
  for (let n = 0; n < ENTRIES; n += BATCH) {
    const ids = Array.from({ length: BATCH }, () => `${String(id++).padStart(7, '0')}-0000`);
    sizeOf.set(ids[0], await backend.send(['EVALSHA', sha, 1, 'k', ...ids]));
    await backend.evalScript(control, [], [controlSize]);
  }
  const log = (await backend.send(['SLOWLOG', 'GET', -1])).filter((e) => String(e[3][0]).toUpperCase() === 'EVALSHA');
  const calls = log.filter((e) => e[3][1] === sha).map((e) => ({ us: e[2], size: sizeOf.get(String(e[3][4])) }));
  const controls = log.filter((e) => e[3][1] === control.sha).map((e) => e[2]);
  if (calls.length !== sizeOf.size || controls.length !== sizeOf.size) throw new Error(`SLOWLOG kept ${calls.length} and ${controls.length} of ${sizeOf.size} calls`);
  return { calls: calls.reverse(), controls }; // oldest first
}

const afterDoubling = (size) => [17, 18, 19, 20].some((k) => size > 2 ** k && size <= 2 ** k + AFTER);
const rows = [];
const steal0 = cpuSteal();
const load0 = loadavg()[0];
for (let round = 1; round <= ROUNDS; round++) {
  for (const kind of ['hash', 'set']) {
    const { calls, controls } = await grow(kind);
    const near = calls.filter((c) => afterDoubling(c.size)).map((c) => c.us);
    const far = calls.filter((c) => !afterDoubling(c.size)).map((c) => c.us);
    const first = [17, 18, 19, 20].map((k) => calls.find((c) => c.size > 2 ** k)?.us ?? NaN);
    const row = { round, kind, calls: calls.length, p50: quantile(far, 0.5), nearP50: quantile(near, 0.5), first, longest: largest(calls.map((c) => c.us)), over1: calls.filter((c) => c.us > 1000).length, over2: calls.filter((c) => c.us > 2000).length };
    Object.assign(row, { controlP50: quantile(controls, 0.5), controlLongest: largest(controls), controlOver1: controls.filter((us) => us > 1000).length, controlOver2: controls.filter((us) => us > 2000).length });
    rows.push(row);
    console.log(`round ${round} ${kind}: ${row.calls} calls, p50 ${row.p50} µs (${row.nearP50} µs within ${AFTER} entries after a doubling), the call past 2^17…2^20: ${first.join(', ')} µs, longest ${row.longest} µs, over 1 ms ${row.over1}, over 2 ms ${row.over2}; the control: p50 ${row.controlP50} µs, longest ${row.controlLongest} µs, over 1 ms ${row.controlOver1}, over 2 ms ${row.controlOver2}`);
  }
}
const steal = stealShare(steal0, cpuSteal());
const text = [
  `# Redis growing one hash or set to ${ENTRIES.toLocaleString('en')} entries, ${BATCH} a Lua call ${new Date().toISOString().slice(0, 16)}Z`,
  '',
  `\`node bench/hash-growth.mjs ${ROUNDS}\`: redis-server at ${priority}; SLOWLOG times every call (µs, time in Redis).`,
  '',
  '| round | key | calls | p50 | p50 within 20,000 entries after a doubling | the call past 2^17, 2^18, 2^19, 2^20 entries | longest | over 1 ms | over 2 ms | control p50 | control longest | control over 1 ms | control over 2 ms |',
  '|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.round} | ${r.kind} | ${r.calls.toLocaleString('en')} | ${r.p50} | ${r.nearP50} | ${r.first.join(', ')} | ${r.longest} | ${r.over1} | ${r.over2} | ${r.controlP50} | ${r.controlLongest} | ${r.controlOver1} | ${r.controlOver2} |`),
  '',
  `Machine: 2 cores shared with other work; 1-minute load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}; the hypervisor took ${steal.toFixed(1)}% of the cores' time (steal).`,
  '',
].join('\n');
writeFileSync(new URL('./results/hash-growth.md', import.meta.url), text);
await backend.close();
await redis.stop();
