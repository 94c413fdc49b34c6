// Many obniz slaves in one process (`coord run --role slave --slaves N`, issue 34),
// on one redis-server (SLOWLOG at 0 µs when timing a command, at real-time priority
// when root). Per size N (500 and 5,000; SLAVES_SIZES=500 for one):
//  1. one process of N slaves starts: the time to its `slaves running` line (and
//     the time it reports itself), its Redis connections (CLIENT LIST, the bench's
//     own left out), its RSS, and its CPU and Redis's over 10 s with no device;
//  2. a manager (in this process) lists DEVICES_PER_SLAVE devices a slave: the
//     time until every one runs (a claim each), RSS again;
//  3. `synchronize` as the manager sends it: the time from one PUBLISH until all N
//     slaves have read their lists (N more HGETALL in commandstats; 3 times), and
//     PUBLISH's time in Redis (SLOWLOG at 0 µs), 100 of them 100 ms apart;
//  4. the process stops (SIGTERM): the time until it exits, every list handed over
//     or left for the health check (no other slave);
//  5. the same PUBLISH with N connections subscribed to the broadcast channel, as N
//     one-slave processes listen (raw sockets, one SUBSCRIBE each): the cost before.
// Then once: 500 slaves starting over a Redis holding CLAIMS (1,000,000) claims of
// other slaves, as in the fleet (the start walks them once, HSCAN).
// Writes bench/results/obniz-slaves.md. Run: npx tsc -p . && node bench/obniz-slaves.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createBackend } from '../dist/adapters/index.js';
import { scenarioContext } from '../dist/conformance/scenario-context.js';
import { memoryLogger } from '../dist/core/logger.js';
import plugin from '../dist/plugins/obniz/index.js';
import { Manager } from '../dist/plugins/obniz/roles/manager.js';
import { coord, root } from '../dist/test/support/cli.js';
import { deviceFile, devices } from '../dist/test/support/obniz.js';
import { startRedis } from '../dist/test/support/redis.js';
import { exitWithHelpIfAsked } from './help.mjs';
import { commandStats, forget, info, killOnExit, largest, logEveryCall, logNoCall, median, prioritise, quantile, sleep } from './scale/kit.mjs';

exitWithHelpIfAsked(import.meta.url);
const SIZES = (process.env.SLAVES_SIZES ?? '500,5000').split(',').map(Number);
const DEVICES_PER_SLAVE = 10;
const PUBLISHES = 100;
const IDLE_S = 10;
const CLAIMS = Number(process.env.SLAVES_CLAIMS ?? 1_000_000);
const WORKER = join(root, 'test/fixtures/obniz/recording-worker.mjs');
// workers' onLoop every 5 s (1 s by default): 50,000 workers' loops are not what is measured
const TIMINGS = ['loopInterval=5', 'syncInterval=600'];
// The manager checks no heartbeat: once the process stops, its slaves are dead with no slave alive to take
// their devices, and the health check's attempts are not what is measured here.
const began = Date.now();
const log = (text) => console.error(`[${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${text}`);
const loads = [loadavg()[0]];

const redis = await startRedis();
const backend = await createBackend({ url: redis.url, clientName: 'bench' });
killOnExit((await info(backend, 'server')).process_id);
const priority = await prioritise(backend);
await logNoCall(backend);

/** Connections not the bench's own. */
async function otherClients() {
  const list = String(await backend.send(['CLIENT', 'LIST'])).split('\n').filter((l) => l.trim());
  return list.filter((l) => !/\bname=bench\b/.test(l) && !/\bname=manager/.test(l)).length;
}
/** A process's resident memory (MB), from /proc. */
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

/** A process of `n` slaves; resolves once it says `slaves running`, with the times. */
async function startHost(name, n, prefix) {
  const t0 = performance.now();
  const p = coord(['run', '--plugin', 'obniz', '--role', 'slave', '--redis', redis.url, '--prefix', prefix, '--instance-name', name, '--slaves', String(n), '--worker', WORKER, ...TIMINGS.flatMap((v) => ['--set', `obniz.${v}`])]);
  killOnExit(p.child.pid, true);
  const line = await p.waitFor((l) => l.msg === 'slaves running', 600_000);
  return { p, wallS: (performance.now() - t0) / 1000, reportedS: line.ms / 1000 };
}

/** The PUBLISH calls on `channel` logged since the last read (ms each). */
async function publishTimes(channel) {
  const entries = await backend.send(['SLOWLOG', 'GET', '-1']);
  await backend.send(['SLOWLOG', 'RESET']);
  return entries.filter(([, , , args]) => String(args[0]).toUpperCase() === 'PUBLISH' && String(args[1]) === channel).map(([, , micros]) => micros / 1000);
}

/** `count` synchronize messages from the manager, 100 ms apart (the slaves sync in between); their PUBLISH times in Redis. */
async function timePublishes(manager, channel, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    await logEveryCall(backend);
    await manager.synchronize();
    await sleep(100);
    times.push(...(await publishTimes(channel)));
  }
  await logNoCall(backend);
  return times;
}

/** ms from one synchronize until every one of the `n` slaves has read its list. */
async function reach(manager, n) {
  const before = (await commandStats(backend)).hgetall?.calls ?? 0;
  const t = performance.now();
  await manager.synchronize();
  while (((await commandStats(backend)).hgetall?.calls ?? 0) - before < n) await sleep(5);
  return performance.now() - t;
}

/** A process's CPU so far (s), from /proc. */
const cpuS = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0) / 100;
const redisCpuS = async () => {
  const cpu = await info(backend, 'cpu');
  return cpu.used_cpu_sys_main_thread + cpu.used_cpu_user_main_thread;
};

/** N raw connections subscribed to `channel`, as N one-slave processes are (messages read and dropped). */
async function rawSubscribers(n, channel) {
  const url = new URL(redis.url);
  const sockets = [];
  for (let i = 0; i < n; i++) {
    const s = connect(Number(url.port), url.hostname);
    s.on('data', () => {});
    s.on('error', () => {});
    s.write(`SUBSCRIBE ${channel}\r\n`);
    sockets.push(s);
  }
  while (Number((await backend.send(['PUBSUB', 'NUMSUB', channel]))[1]) < n) await sleep(100);
  return { close: () => sockets.forEach((s) => s.destroy()) };
}

const stat = (xs) => `p50 ${median(xs).toFixed(3)} ms, p99 ${quantile(xs, 0.99).toFixed(3)} ms, max ${largest(xs).toFixed(3)} ms`;
const rows = [];
for (const n of SIZES) {
  const prefix = `{s${n}}:`;
  const broadcast = `${prefix}app`;
  log(`${n} slaves in one process`);
  const host = await startHost('h', n, prefix);
  const row = { n, startS: host.wallS, reportedS: host.reportedS, connections: await otherClients(), rss: rssMb(host.p.child.pid) };
  log(`  started in ${row.startS.toFixed(2)} s (it says ${row.reportedS.toFixed(2)} s), ${row.connections} connections, RSS ${row.rss.toFixed(0)} MB`);
  await sleep(2000);
  const [c0, r0] = [cpuS(host.p.child.pid), await redisCpuS()];
  await sleep(IDLE_S * 1000);
  row.idleCpu = ((cpuS(host.p.child.pid) - c0) / IDLE_S) * 100;
  row.idleRedis = (((await redisCpuS()) - r0) / IDLE_S) * 100;
  log(`  idle: the process ${row.idleCpu.toFixed(1)} % of a core, Redis ${row.idleRedis.toFixed(1)} %`);

  const managerBackend = await createBackend({ url: redis.url, clientName: 'manager' });
  const file = deviceFile(devices(n * DEVICES_PER_SLAVE));
  const ctx = scenarioContext({ plugin, backend: managerBackend, keyPrefix: prefix, signal: new AbortController().signal, logger: memoryLogger([]), config: { instanceName: 'm', devices: file.path, syncInterval: 600, healthCheckInterval: 600, discover: false }, roles: ['manager'] });
  const manager = new Manager(ctx);
  const t1 = performance.now();
  await manager.start();
  while ((await backend.send(['HLEN', `${prefix}obniz:claims`])) < n * DEVICES_PER_SLAVE) await sleep(100);
  row.devices = n * DEVICES_PER_SLAVE;
  row.devicesS = (performance.now() - t1) / 1000;
  row.rssDevices = rssMb(host.p.child.pid);
  log(`  ${row.devices} devices running ${row.devicesS.toFixed(2)} s after the manager started; RSS ${row.rssDevices.toFixed(0)} MB`);

  const reaches = [];
  for (let i = 0; i < 3; i++) {
    await sleep(1000);
    reaches.push(await reach(manager, n));
  }
  row.reachMs = median(reaches);
  row.publish = await timePublishes(manager, broadcast, PUBLISHES);
  row.subscribers = Number((await backend.send(['PUBSUB', 'NUMSUB', broadcast]))[1]);
  log(`  synchronize: all ${n} slaves read their lists ${reaches.map((ms) => ms.toFixed(0)).join(', ')} ms after one; PUBLISH to ${row.subscribers} subscriber(s) ${stat(row.publish)}`);

  const t3 = performance.now();
  host.p.kill('SIGTERM');
  await host.p.exited;
  forget(host.p.child.pid);
  row.stopS = (performance.now() - t3) / 1000;
  log(`  stopped in ${row.stopS.toFixed(2)} s`);

  const raw = await rawSubscribers(n, broadcast);
  row.rawPublish = await timePublishes(manager, broadcast, PUBLISHES);
  raw.close();
  log(`  before (${n} one-slave processes' subscriptions): PUBLISH ${stat(row.rawPublish)}`);
  await manager.stop();
  await managerBackend.close();
  await backend.send(['FLUSHALL']);
  rows.push(row);
  loads.push(loadavg()[0]);
}

// ---- 500 slaves over a million claims of other slaves
log(`${CLAIMS.toLocaleString('en')} claims of other slaves, then 500 slaves start`);
for (let i = 0; i < CLAIMS; i += 10_000) {
  const args = [];
  for (let j = i; j < Math.min(CLAIMS, i + 10_000); j++) args.push(`${String(j).padStart(7, '0')}-x`, `other-${j % 5000}`);
  await backend.send(['HSET', '{big}:obniz:claims', ...args]);
}
const big = await startHost('h', 500, '{big}:');
log(`  started in ${big.wallS.toFixed(2)} s (it says ${big.reportedS.toFixed(2)} s after its checks)`);
big.p.kill('SIGTERM');
await big.p.exited;
forget(big.p.child.pid);
loads.push(loadavg()[0]);
await backend.close();
await redis.stop();

// ---- the report
const fmt = (x) => x.toLocaleString('en');
const lines = [
  `# obniz: many slaves in one process`,
  '',
  `${new Date().toISOString().slice(0, 10)}, node bench/obniz-slaves.mjs; redis-server at ${priority}; load (1 min) ${loads.map((l) => l.toFixed(1)).join(' → ')}; ${DEVICES_PER_SLAVE} devices a slave, onLoop every 5 s.`,
  '',
  '| slaves in the process | start (its own count) | Redis connections | RSS | idle CPU: process, Redis | devices running after the manager starts | RSS with them | every slave read its list after a synchronize | stop |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) =>
    `| ${fmt(r.n)} | ${r.startS.toFixed(2)} s (${r.reportedS.toFixed(2)} s) | ${r.connections} | ${r.rss.toFixed(0)} MB | ${r.idleCpu.toFixed(1)} %, ${r.idleRedis.toFixed(1)} % | ${fmt(r.devices)} in ${r.devicesS.toFixed(2)} s | ${r.rssDevices.toFixed(0)} MB | ${r.reachMs.toFixed(0)} ms | ${r.stopS.toFixed(2)} s |`,
  ),
  '',
  '`synchronize`\'s PUBLISH in Redis (SLOWLOG at 0 µs, 100 calls):',
  '',
  '| slaves | N in one process (subscribers) | N one-slave processes (subscribers) |',
  '|---:|---|---|',
  ...rows.map((r) => `| ${fmt(r.n)} | ${stat(r.publish)} (${r.subscribers}) | ${stat(r.rawPublish)} (${fmt(r.n)}) |`),
  '',
  `500 slaves over ${fmt(CLAIMS)} claims of other slaves: started in ${big.wallS.toFixed(2)} s (${big.reportedS.toFixed(2)} s after its checks: the one HSCAN pass is the rest).`,
];
const report = lines.join('\n');
console.log(report);
writeFileSync(new URL('./results/obniz-slaves.md', import.meta.url), `${report}\n`);
