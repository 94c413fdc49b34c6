// obniz at 10,000, 100,000 and 1,000,000 devices over 50, 500 and 5,000 slaves
// (bench/scale.mjs runs it): the manager's side. The manager is a real one, a
// process of its own (`coord run --plugin obniz --role manager`, a device-list
// file, its webhook on to ask for syncs); the slaves are simulated: each beats
// with the slave's own heartbeat script (touchSlave) from this process, every
// BEAT_EVERY_MS, so a loaded machine cannot starve them (their heartbeat TTL and
// deadAfter are longer than the defaults, stated below). Per size and round:
//  1. the file is written and the fleet beats; the manager starts: its first
//     sync (file read, diffed, planned, every device listed) is timed from its
//     first heartbeat's nowMs to the end of its last assignDevices call
//     (SLOWLOG), with the manager's CPU and RSS;
//  2. a sync asked through the webhook (time to its answer, and the manager's
//     CPU) with the list changed by one device: the diff's path, reading the
//     lists the first sync changed (all of them);
//  3. syncs with nothing changed (file, lists): the shortcut's path;
//  4. syncs up to the periodic full read (every FULL_READ_EVERY syncs every list
//     is read in full and diffed), that one timed;
//  5. Redis's memory per device and the manager's peak RSS (VmHWM).
// SCALE_SIZES=10000,100000 runs only those sizes (a quick look);
// SCALE_PROFILE=DIR makes the manager write a CPU profile there when it stops (cpu-profile.cjs).
// SCALE_KEEP_PAGES=1 keeps redis-server's memory between rounds: its allocator keeps the pages it
// frees (MALLOC_CONF, set by bench/scale.mjs), Redis is filled with 800 MB first, and each round
// empties it with FLUSHALL ASYNC (a plain FLUSHALL hands the pages back): the first sync then writes
// into memory Redis has touched before (to tell whether its page faults make the long calls).
// SCALE_MEMLOG=PATH makes the manager log its memory and collections to PATH-SIZE.jsonl (memory-log.cjs).
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scenarioContext } from '../../dist/conformance/scenario-context.js';
import { loadScriptDir } from '../../dist/core/scripts.js';
import { silentLogger } from '../../dist/core/logger.js';
import plugin from '../../dist/plugins/obniz/index.js';
import { FULL_READ_EVERY } from '../../dist/plugins/obniz/list-cache.js';
import { touchSlave } from '../../dist/plugins/obniz/scripts.js';
import { coord } from '../../dist/test/support/cli.js';
import { freePort } from '../../dist/test/support/redis.js';
import { controlBeside, controlIterations, cpuSteal, forget, info, killOnExit, loadScripts, logCallsOver, logEveryCall, logNoCall, median, nameControl, scriptCalls, sleep, stealShare, usedMemory } from './kit.mjs';

const PREFIX = '{scale}:';
const DEVICES_PER_SLAVE = 200;
/** As often as a real slave beats (heartbeatInterval, 10 s): every 5 s the bench's own process doubled the fleet's load on the two cores it shares with the manager and Redis. */
const BEAT_EVERY_MS = 10_000;
/** Longer than the defaults (20 s, 30 s): a loaded machine may hold this process's beats up for a while. */
const timing = { heartbeatInterval: 10, heartbeatTtl: 120, deadAfter: 180 };
const UNCHANGED_SYNCS = 3;
/** ARGV[n] of a logged EVALSHA call (its args: EVALSHA, the sha, numkeys, the keys, ARGV). */
const argv = (call, n) => call.args[3 + Number(call.args[2]) + n - 1];

/** SLOWLOG's threshold through the manager's start and first sync (µs). */
const FIRST_SYNC_LOGS_OVER_US = 100;
const CONTROL_BESIDE = "control beside the manager's start and first sync: the fixed-work loop, about 0.45 ms, every 5 ms from a process of its own at real-time priority";
const NAME = 'bench-manager';

/** The device list, written a slice at a time (a 1,000,000-device list is 170 MB of JSON); `variant` changes device 0's configs. */
function writeDevices(file, n, variant = 0) {
  const fd = openSync(file, 'w');
  writeSync(fd, '[');
  for (let start = 0; start < n; start += 10_000) {
    const part = [];
    for (let i = start; i < Math.min(n, start + 10_000); i++) {
      part.push(
        JSON.stringify({
          id: `${String(Math.floor(i / 10000)).padStart(4, '0')}-${String(i % 10000).padStart(4, '0')}`,
          hardware: 'blewifi_gw2',
          os: 'obnizos',
          osVersion: '3.5.0',
          configs: JSON.stringify({ interval: 60, threshold: 28.5, label: `room ${i}`, ...(i === 0 && variant ? { variant } : {}) }),
          user: { id: `user-${i % 97}`, name: 'tenant' },
        }),
      );
    }
    writeSync(fd, (start ? ',' : '') + part.join(','));
  }
  writeSync(fd, ']');
  closeSync(fd);
}

/** For the log: RSS and peak so far, so a peak can be placed. */
function memoryText(pid) {
  const { rss, peak } = processMemoryMb(pid);
  return `${rss.toFixed(0)} MB (peak so far ${peak.toFixed(0)} MB)`;
}

/** A process's CPU so far (user + system, ms; /proc/PID/stat counts in clock ticks of 10 ms). */
function processCpuMs(pid) {
  const fields = procStat(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** /proc/PID/stat's fields after the command's name (its field 3 first). */
const procStat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');

const overTwo = (calls) => calls.filter((c) => c.ms > 2).length;
const totalMs = (calls) => calls.reduce((sum, c) => sum + c.ms, 0);

/** Steal bands for report(): rounds pooled by how much of the cores' time the hypervisor took. */
const STEAL_BANDS = [
  [0, 2],
  [2, 5],
  [5, 100],
];

/** A process's page faults so far (minor + major; /proc/PID/stat fields 10 and 12). */
function processFaults(pid) {
  const fields = procStat(pid);
  return Number(fields[7]) + Number(fields[9]);
}

/** A process's resident memory now and at its peak (MB). */
function processMemoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Writes about `mb` MB of strings into Redis and empties it again, keeping the pages (SCALE_KEEP_PAGES). */
async function touchPages(backend, mb) {
  const fill = "local v = string.rep('x', 1000) for i = 1, 10000 do redis.call('SET', ARGV[1] .. i, v) end";
  for (let i = 0; i < mb / 10; i++) await backend.send(['EVAL', fill, '0', `fill:${i}:`]);
  await empty(backend);
}

/** FLUSHALL; with SCALE_KEEP_PAGES, ASYNC and the frees waited for (a plain FLUSHALL purges the allocator's pages). */
async function empty(backend) {
  if (!process.env.SCALE_KEEP_PAGES) return backend.send(['FLUSHALL']);
  await backend.send(['FLUSHALL', 'ASYNC']);
  while ((await info(backend, 'memory')).lazyfree_pending_objects > 0) await sleep(100);
}

/** N simulated slaves beating with touchSlave every BEAT_EVERY_MS, 500 at a time. */
class Fleet {
  constructor(ctx, size) {
    this.ctx = ctx;
    this.names = Array.from({ length: size }, (_, i) => `slave-${String(i).padStart(4, '0')}`);
    this.longestGapMs = 0;
  }

  async sweep() {
    const start = Date.now();
    for (let i = 0; i < this.names.length; i += 500) await Promise.all(this.names.slice(i, i + 500).map((name) => touchSlave(this.ctx, name)));
    if (this.lastSweep !== undefined) this.longestGapMs = Math.max(this.longestGapMs, Date.now() - this.lastSweep);
    this.lastSweep = start;
  }

  /** Sweeps until stop(); resolves once the first sweep is done. */
  async start() {
    await this.sweep();
    this.beating = true;
    this.loop = (async () => {
      while (this.beating) {
        await new Promise((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, Math.max(0, this.lastSweep + BEAT_EVERY_MS - Date.now()));
        });
        if (this.beating) await this.sweep().catch(() => {});
      }
    })();
  }

  async stop() {
    this.beating = false;
    this.wake?.();
    await this.loop;
  }
}

export default {
  unit: 'device',
  sizes: process.env.SCALE_SIZES ? process.env.SCALE_SIZES.split(',').map(Number) : [10_000, 100_000, 1_000_000],
  measures: [
    { key: 'first', label: "first sync: the manager's first heartbeat → the end of its last assignDevices call", unit: 's', digits: 2, target: { within: 10, of: 100_000 } },
    { key: 'syncCpu', label: "  the manager's CPU in it (from its first heartbeat; time the hypervisor took is not counted in it)", unit: 'CPU-s', digits: 2 },
    { key: 'prepare', label: '  of which before the first assignDevices call (file read and parsed, fingerprints, diff, plan)', unit: 's', digits: 2 },
    { key: 'firstCpu', label: "the manager's CPU from its start to the end of the first sync (node's start included)", unit: 'CPU-s', digits: 2 },
    { key: 'changed', label: 'sync with one device changed in the file (the diff; the lists the first sync wrote re-read)', unit: 'ms', digits: 0, target: { within: 11, of: 100_000 } },
    { key: 'changedCpu', label: "  the manager's CPU in it", unit: 'CPU-ms', digits: 0 },
    { key: 'unchanged', label: 'sync with nothing changed (file and lists), median', unit: 'ms', digits: 1, target: { within: 11, of: 100_000 } },
    { key: 'unchangedCpu', label: "  the manager's CPU in it, median", unit: 'CPU-ms', digits: 0 },
    { key: 'full', label: `sync reading every list in full (every ${FULL_READ_EVERY}th), nothing changed`, unit: 'ms', digits: 0, target: { within: 11, of: 100_000 } },
    { key: 'fullCpu', label: "  the manager's CPU in it", unit: 'CPU-ms', digits: 0 },
    { key: 'rss', label: "the manager's RSS after these syncs", unit: 'MB', digits: 0, target: { max: 500 } },
    { key: 'peak', label: "the manager's peak RSS (VmHWM)", unit: 'MB', digits: 0, target: { max: 500 } },
    { key: 'memory', label: 'Redis memory per device: used_memory delta / devices (lists, device index, pending-onInstall marks)', unit: 'bytes', digits: 0 },
    { key: 'gap', label: "longest gap between a simulated slave's heartbeats", unit: 's', digits: 1 },
    { key: 'redisFaults', label: "redis-server's page faults during the first sync (memory it touched for the first time, or again after handing it back)", unit: 'faults', digits: 0 },
    { key: 'steal', label: "the cores' time the hypervisor took (steal) during the first sync", unit: '%', digits: 1 },
  ],
  loggedCalls:
    "of each round (the manager's scripts, from its first heartbeat to the end of the last sync, the simulated slaves' touchSlave, and the control a process of the bench's calls every 5 ms from the manager's start to the end of its first sync; to the end of the first sync only the calls over 0.1 ms are logged, so the counts and medians of the short scripts are of the later syncs)",

  async setup({ redis, backend, log }) {
    const ctx = scenarioContext({ plugin, backend, keyPrefix: PREFIX, logger: silentLogger, signal: new AbortController().signal, config: timing });
    const names = await loadScripts(backend, loadScriptDir(plugin.scripts, plugin.contract));
    const redisPid = (await info(backend, 'server')).process_id;
    nameControl(names, CONTROL_BESIDE);
    // the control beside the manager's start and first sync: as long as an assignDevices call at 1,000,000 devices
    const controlSize = await controlIterations(backend, 0.45);
    if (process.env.SCALE_KEEP_PAGES) await touchPages(backend, 800);
    const dir = mkdtempSync(join(tmpdir(), 'obniz-scale-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    return { ctx, backend, log, names, redis, dir, controlSize, redisPid };
  },

  async round(s, size) {
    const { ctx, backend, log, names, dir, controlSize, redisPid } = s;
    const values = {};
    const calls = [];
    await empty(backend);
    const file = join(dir, `devices-${size}.json`);
    writeDevices(file, size);
    const fleet = new Fleet(ctx, Math.max(1, size / DEVICES_PER_SLAVE));
    await fleet.start();
    const before = await usedMemory(backend);
    // Through the manager's start and first sync the SLOWLOG logs only calls over 0.1 ms (every
    // assignDevices call, not the 100,000s of GET and HLEN or the slaves' beats): logging and reading
    // every command cost Redis and this process more at 1,000,000 devices than at 100,000, and so
    // weighed on the time measured. Every call after. Read every 0.5 s to the round's end.
    await logEveryCall(backend);
    await logCallsOver(backend, FIRST_SYNC_LOGS_OVER_US);
    const readLog = () => {
      let reading = true;
      const reader = (async () => {
        while (reading) {
          calls.push(...(await scriptCalls(backend, names)));
          await sleep(500);
        }
      })();
      return async () => {
        reading = false;
        await reader;
      };
    };
    let stopReading = readLog();

    // 1. the manager's start and first sync
    const port = await freePort();
    const sets = Object.entries({ ...timing, devices: file, instanceName: NAME, webhook: true, webhookPort: port, syncInterval: 86_400, watchInterval: 86_400 }).flatMap(([k, v]) => ['--set', `obniz.${k}=${v}`]);
    // --cpu-prof is not allowed in NODE_OPTIONS: a preloaded module profiles through node:inspector
    const env = process.env.SCALE_PROFILE ? { NODE_OPTIONS: `--require ${new URL('./cpu-profile.cjs', import.meta.url).pathname}`, CPU_PROF_DIR: process.env.SCALE_PROFILE } : {};
    // SCALE_MEMLOG=FILE: the manager logs its memory every 200 ms there (memory-log.cjs); SCALE_NODE_OPTIONS: more node options for it
    if (process.env.SCALE_MEMLOG) Object.assign(env, { NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --require ${new URL('./memory-log.cjs', import.meta.url).pathname}`.trim(), MEM_LOG_FILE: `${process.env.SCALE_MEMLOG}-${size}.jsonl` });
    if (process.env.SCALE_NODE_OPTIONS) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} ${process.env.SCALE_NODE_OPTIONS}`.trim();
    const manager = coord(['run', '--plugin', 'obniz', '--role', 'manager', '--redis', s.redis.url, '--prefix', PREFIX, ...sets], env);
    const pid = manager.child.pid;
    killOnExit(pid, true);
    const stopControl = controlBeside(s.redis.url, controlSize);
    // the first heartbeat's nowMs: the manager's score in the index, until its next beat (every 10 s)
    let beating = true;
    const firstBeat = (async () => {
      while (beating) {
        const score = await backend.send(['ZSCORE', ctx.keys.managerIndex(), NAME]);
        if (score !== null) return { nowMs: Number(score), cpuMs: processCpuMs(pid) };
        await sleep(20);
      }
    })();
    const steal = cpuSteal();
    const faults = processFaults(redisPid);
    try {
      await manager.waitFor((l) => l.msg === 'manager running', 30 * 60_000);
      values.firstCpu = processCpuMs(pid) / 1000;
      values.steal = stealShare(steal, cpuSteal());
      values.redisFaults = processFaults(redisPid) - faults;
      await stopControl();
      await stopReading();
      calls.push(...(await scriptCalls(backend, names)));
      await logCallsOver(backend, 0);
      const { nowMs: start, cpuMs: cpuAtBeat } = await firstBeat;
      values.syncCpu = values.firstCpu - cpuAtBeat / 1000;
      const assigns = calls.filter((c) => c.script === 'assignDevices');
      // for report(): the first sync's long calls beside the control's, in the same seconds
      const beside = calls.filter((c) => c.script === CONTROL_BESIDE);
      Object.assign(values, { assignOver: overTwo(assigns), assignMs: totalMs(assigns), controlOver: overTwo(beside), controlMs: totalMs(beside) });
      const last = assigns.at(-1);
      values.first = (Number(argv(last, 4)) + last.ms - start) / 1000; // ARGV[4] nowMs
      values.prepare = (Number(argv(assigns[0], 4)) - start) / 1000;
      log(`  first sync: ${values.first.toFixed(2)} s, ${assigns.length} assignDevices calls; manager ${memoryText(pid)}`);
      // ARGV[6], the call's first device; its nowMs after the first heartbeat
      const long = assigns.filter((c) => c.ms > 2).map((c) => `${c.ms.toFixed(1)} ms at ${argv(c, 6)} +${((Number(argv(c, 4)) - start) / 1000).toFixed(2)} s`);
      if (long.length) log(`  assignDevices calls over 2 ms: ${long.join(', ')}`);
      stopReading = readLog();

      /** One sync asked through the webhook: its time to the answer and the manager's CPU in it. */
      const sync = async () => {
        const cpu0 = processCpuMs(pid);
        const t0 = performance.now();
        const res = await fetch(`http://127.0.0.1:${port}/webhook`);
        if (res.status !== 200) throw new Error(`webhook: ${res.status} ${await res.text()}`);
        return { ms: performance.now() - t0, cpuMs: processCpuMs(pid) - cpu0 };
      };
      let syncs = 1; // the first one counts
      // 2. one device changed
      writeDevices(file, size, 1);
      const changed = await sync();
      syncs++;
      log(`  changed: manager ${memoryText(pid)}`);
      Object.assign(values, { changed: changed.ms, changedCpu: changed.cpuMs });
      // 3. nothing changed
      const unchanged = [];
      for (let i = 0; i < UNCHANGED_SYNCS; i++, syncs++) unchanged.push(await sync());
      Object.assign(values, { unchanged: median(unchanged.map((u) => u.ms)), unchangedCpu: median(unchanged.map((u) => u.cpuMs)) });
      // 4. up to the full read
      while (syncs % FULL_READ_EVERY !== 0) (await sync(), syncs++);
      const full = await sync();
      Object.assign(values, { full: full.ms, fullCpu: full.cpuMs });
      log(`  full read: manager ${memoryText(pid)}`);
      log(`  syncs: changed ${changed.ms.toFixed(0)} ms, unchanged ${values.unchanged.toFixed(1)} ms, full read ${full.ms.toFixed(0)} ms`);

      // 5. memory
      Object.assign(values, processMemoryMb(pid));
      const lines = manager.lines.filter((l) => Number(l.level) >= 50);
      if (lines.length) log(`  manager errors: ${lines.map((l) => l.msg).join(' | ')}`);
    } finally {
      beating = false;
      await stopControl();
      await stopReading();
      manager.kill('SIGTERM');
      await Promise.race([manager.exited, sleep(30_000)]);
      manager.kill('SIGKILL');
      forget(pid);
      await fleet.stop();
    }
    calls.push(...(await scriptCalls(backend, names)));
    await logNoCall(backend);
    const after = await usedMemory(backend);
    values.memory = (after.used - before.used) / size;
    values.gap = fleet.longestGapMs / 1000;
    return { values, calls };
  },

  /**
   * The first syncs' assignDevices calls over 2 ms beside the control's, rounds pooled by the
   * hypervisor's steal in them: a host pause hits a call in proportion to how long it runs, so both
   * are counted a second in Redis.
   */
  report(results) {
    const rounds = [...results].flatMap(([size, rs]) => rs.map((r) => ({ size, ...r.values }))).filter((r) => r.assignMs > 0 && r.controlMs > 0);
    const rate = (over, ms) => (ms ? (over / (ms / 1000)).toFixed(2) : '–');
    const rows = STEAL_BANDS.map(([low, high]) => {
      const band = rounds.filter((r) => r.steal >= low && r.steal < high);
      const sum = (key) => band.reduce((total, r) => total + r[key], 0);
      return `| ${high === 100 ? `${low} % or more` : `${low}–${high} %`} | ${band.length} | ${sum('assignOver')} in ${(sum('assignMs') / 1000).toFixed(1)} s | ${rate(sum('assignOver'), sum('assignMs'))} | ${sum('controlOver')} in ${(sum('controlMs') / 1000).toFixed(1)} s | ${rate(sum('controlOver'), sum('controlMs'))} |`;
    });
    return [
      "The first syncs' calls over 2 ms, the rounds pooled by the hypervisor's steal in them (every size):",
      '',
      '| steal in the round | rounds | assignDevices over 2 ms, in Redis | a second | control beside over 2 ms, in Redis | a second |',
      '|---|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n');
  },

  describe() {
    return [
      `A real manager (\`coord run --plugin obniz --role manager\`, a process of its own) reads a device-list file (JSON, about 170 bytes a`,
      `device: id, hardware, os, osVersion, configs, user); ${DEVICES_PER_SLAVE} devices per slave. The slaves are simulated: each writes the slave's own`,
      `heartbeat (the touchSlave script) every ${BEAT_EVERY_MS / 1000} s from the bench's process; heartbeatTtl ${timing.heartbeatTtl} s and deadAfter ${timing.deadAfter} s (not the defaults`,
      '20 s and 30 s: a loaded machine may hold the bench\'s beats up), the same for the manager. The manager syncs only when asked (its',
      'webhook, GET, timed to the answer; syncInterval and watchInterval a day). First sync: from the nowMs of its first touchManager',
      'call to the end of its last assignDevices call (SLOWLOG). CPU: the manager process\'s (/proc, 10 ms ticks). Memory: used_memory',
      'after the round minus before, per device; the manager\'s VmRSS and VmHWM.',
    ].join('\n');
  },
};
