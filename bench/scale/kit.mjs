// What every plugin's scale bench (bench/scale/PLUGIN.mjs) shares: Redis's own
// CPU and memory read from INFO, SLOWLOG read as script calls, the control
// script of fixed work, small statistics, and killing every process the bench
// started on any exit (a bench killed half-way must not leave a 10,000-worker
// fleet's Redis or a proxy behind on a shared machine).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// ---- processes killed on any exit

/** pid → whether it leads a process group of its own (coord processes do: their children go with them). */
const started = new Map();
let exiting = false;
process.on('exit', () => {
  exiting = true;
  for (const [pid, group] of started) {
    try {
      process.kill(group ? -pid : pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130)); // 'exit' kills the rest

/** Kills `pid` (its process group when `group`) when this process exits, however it exits. */
export function killOnExit(pid, group = false) {
  if (!exiting) started.set(pid, group);
}
/** It ended on its own (a clean stop): nothing to kill. */
export function forget(pid) {
  started.delete(pid);
}

// ---- the processes' own view

/** A process's CPU so far, all its threads (user + system, ms; /proc/PID/stat counts in clock ticks of 10 ms). */
export function processCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** GET `url`: the time to its last byte (ms) and its body; any status but 200 throws. */
export async function timed(url) {
  const start = performance.now();
  const res = await fetch(url);
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 200)}`);
  return { ms: performance.now() - start, body };
}

/** Process `pid`'s TCP sockets as /proc/net/tcp rows: { local, remote } ports and state (01: established). */
function socketsOf(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {} // closed meanwhile
  }
  const port = (address) => Number.parseInt(address.split(':').at(-1), 16);
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((f) => readFileSync(f, 'utf8').trim().split('\n').slice(1))
    .map((row) => row.trim().split(/\s+/))
    .filter((c) => inodes.has(c[9]))
    .map((c) => ({ local: port(c[1]), remote: port(c[2]), state: c[3] }));
}

/** Process `pid`'s established connections to 127.0.0.1:`port` (from /proc: costs Redis nothing). */
export function connectionsTo(pid, port) {
  return socketsOf(pid).filter((s) => s.state === '01' && s.remote === port).length;
}

/** How many of Redis's clients (CLIENT LIST, pub/sub and blocking ones included) are connections of process `pid` on this machine. */
export async function redisClientsOf(backend, pid) {
  // a client is the process's when one of its sockets has the client's port here and Redis's port there (a port
  // alone is not enough: connections to different servers may share a local port)
  const ends = new Set(socketsOf(pid).map((s) => `${s.local}>${s.remote}`));
  const list = String(await backend.send(['CLIENT', 'LIST']));
  const port = (line, field) => / (?:addr|laddr)=/.test(line) && /:(\d+)$/.exec(new RegExp(` ${field}=([^ ]*)`).exec(` ${line}`)?.[1] ?? '')?.[1];
  return list.split('\n').filter((line) => ends.has(`${port(line, 'addr')}>${port(line, 'laddr')}`)).length;
}

// ---- Redis's own view

/** INFO `section` as { field: value } (numbers where they are numbers). */
export async function info(backend, section) {
  const out = {};
  for (const line of String(await backend.send(['INFO', section])).split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out[line.slice(0, at)] = Number.isNaN(Number(line.slice(at + 1))) ? line.slice(at + 1) : Number(line.slice(at + 1));
  }
  return out;
}

/** The redis-server's main thread's CPU so far, in µs (INFO cpu: getrusage of the thread that runs every command). */
export async function redisCpuUs(backend) {
  const cpu = await info(backend, 'cpu');
  return (cpu.used_cpu_sys_main_thread + cpu.used_cpu_user_main_thread) * 1e6;
}

/** INFO commandstats as { command: { calls, usec } }. */
export async function commandStats(backend) {
  const out = {};
  for (const [key, value] of Object.entries(await info(backend, 'commandstats'))) {
    const m = /calls=(\d+),usec=(\d+)/.exec(String(value));
    if (m) out[key.replace('cmdstat_', '')] = { calls: Number(m[1]), usec: Number(m[2]) };
  }
  return out;
}

/**
 * Runs `work` (which returns how many operations it did) and gives Redis's CPU per operation
 * (µs, the main thread's, network included) and the µs per EVALSHA spent inside the scripts
 * (commandstats). Whatever else runs meanwhile is counted too: pause the rest first.
 */
export async function redisCost(backend, work) {
  const [cpu0, stats0] = [await redisCpuUs(backend), await commandStats(backend)];
  const ops = await work();
  const [cpu1, stats1] = [await redisCpuUs(backend), await commandStats(backend)];
  const e0 = stats0.evalsha ?? { calls: 0, usec: 0 };
  const e1 = stats1.evalsha ?? { calls: 0, usec: 0 };
  return { ops, cpuUs: (cpu1 - cpu0) / ops, scriptUs: (e1.usec - e0.usec) / Math.max(1, e1.calls - e0.calls) };
}

/**
 * Redis's CPU (µs, as redisCost) per call of the control script at this moment: `calls` calls of the
 * loop at `iterations`. Costs divided by it are in units of fixed work, which a machine whose speed
 * drifts (a shared VM) changes alike.
 */
export async function controlCost(backend, calls = 300, iterations = 2000) {
  const r = await redisCost(backend, async () => {
    for (let i = 0; i < calls; i++) await backend.evalScript(control, [], [iterations]);
    return calls;
  });
  return r.cpuUs;
}

/**
 * The redis-server's used_memory and used_memory_dataset (bytes: all of it, and the data without the
 * server's overhead such as client buffers), the slow log emptied first (its entries are counted in it).
 */
export async function usedMemory(backend) {
  await backend.send(['SLOWLOG', 'RESET']);
  const memory = await info(backend, 'memory');
  return { used: memory.used_memory, dataset: memory.used_memory_dataset };
}

/**
 * redis-server first on a core (SCHED_FIFO as root, else nice -10, else as it is): the machine is
 * shared, and SLOWLOG should time the scripts, not the server waiting for a core. Says which.
 */
export async function prioritise(backend) {
  const pid = (await info(backend, 'server')).process_id;
  for (const [cmd, args, what] of [
    ['chrt', ['-f', '-p', '10', String(pid)], 'SCHED_FIFO 10'],
    ['renice', ['-n', '-10', '-p', String(pid)], 'nice -10'],
  ]) {
    try {
      execFileSync(cmd, args, { stdio: 'ignore' });
      return what;
    } catch {}
  }
  return 'normal priority';
}

// ---- SLOWLOG as script calls

/**
 * Loads a plugin's scripts into the server's script cache (`defs`: loadScriptDir's), so that no
 * process's first call of one is a NOSCRIPT error and a whole script sent again; sha → name.
 */
export async function loadScripts(backend, defs) {
  for (const d of defs) await backend.send(['SCRIPT', 'LOAD', d.lua]);
  return new Map(defs.map((d) => [d.sha, d.name]));
}

/** SLOWLOG's length while every call is logged. */
const SLOWLOG_KEEPS = 1_000_000;

/** Logs every command from now on (SLOWLOG at 0 µs), the log emptied. */
export async function logEveryCall(backend) {
  await backend.send(['CONFIG', 'SET', 'slowlog-max-len', String(SLOWLOG_KEEPS)]);
  await backend.send(['CONFIG', 'SET', 'slowlog-log-slower-than', '0']);
  await backend.send(['SLOWLOG', 'RESET']);
}

/** Logs the commands that take over `micros` from now on (the log kept). */
export async function logCallsOver(backend, micros) {
  await backend.send(['CONFIG', 'SET', 'slowlog-log-slower-than', String(micros)]);
}

/** Stops logging (a negative threshold) and empties the log. */
export async function logNoCall(backend) {
  await backend.send(['CONFIG', 'SET', 'slowlog-log-slower-than', '-1']);
  await backend.send(['SLOWLOG', 'RESET']);
}

/**
 * The script calls logged since the last read, oldest first: { script, ms, args } (args as SLOWLOG
 * keeps them, each cut at 128 characters; the first 16 kept). `names`: sha → script name. The log is emptied.
 */
export async function scriptCalls(backend, names) {
  // read and emptied in one transaction: another client's call between the two would be lost
  const [log] = await backend.multi([['SLOWLOG', 'GET', '-1'], ['SLOWLOG', 'RESET']]);
  if (log.length >= SLOWLOG_KEEPS) throw new Error(`SLOWLOG held its most, ${SLOWLOG_KEEPS} entries: the oldest calls were lost; read it more often`);
  const calls = [];
  for (const [, , micros, args] of log.reverse()) {
    const command = String(args[0]).toUpperCase();
    // EVAL: a caller's fallback on NOSCRIPT (SLOWLOG keeps 128 characters of the script: not enough to name it)
    if (command === 'EVALSHA') calls.push({ script: names.get(String(args[1])) ?? 'other', ms: micros / 1000, args: args.slice(0, 16).map(String) });
    else if (command === 'EVAL') calls.push({ script: 'EVAL (a script sent whole)', ms: micros / 1000, args: args.map(String) });
  }
  return calls;
}

// ---- the control: a script whose work never varies

/** The calls of the script that spent the most time in Redis (of all rounds and sizes). */
export function mostTimeInRedis(calls) {
  const total = new Map();
  for (const c of calls) total.set(c.script, (total.get(c.script) ?? 0) + c.ms);
  const [script] = [...total].sort((a, b) => b[1] - a[1])[0] ?? [];
  return calls.filter((c) => c.script === script);
}

/** The machine's CPU time so far and the part the hypervisor took (steal), in clock ticks (/proc/stat's cpu line). */
export function cpuSteal() {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return { all: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0 };
}

/** Steal between two readings, % of all CPU time. */
export const stealShare = (a, b) => (100 * (b.steal - a.steal)) / Math.max(1, b.all - a.all);

const loop = 'local x = 0 for i = 1, tonumber(ARGV[1]) do x = x + i end return x';
export const control = { name: 'control', lua: loop, sha: createHash('sha1').update(loop).digest('hex') };

/**
 * `count` calls of a Lua loop of fixed work (no Redis call, no allocation) sized to take `ms`:
 * their times in Redis (ms). On a VM a script's rare long calls are the host's pauses, and no
 * script's longest call can be read below the control's.
 */
export async function controlCalls(backend, ms, count) {
  const times = async (iterations, n) => {
    await logEveryCall(backend);
    for (let i = 0; i < n; i++) await backend.evalScript(control, [], [iterations]);
    const log = await backend.send(['SLOWLOG', 'GET', '-1']);
    return log.filter(([, , , args]) => String(args[0]).toUpperCase() === 'EVALSHA').map(([, , micros]) => micros / 1000);
  };
  const iterations = await controlIterations(backend, ms);
  const out = await times(iterations, count);
  await logNoCall(backend);
  return { iterations, times: out };
}

/** The control's name in scriptCalls' names (a sha → name map): its calls logged as `label`. */
export function nameControl(names, label) {
  names.set(control.sha, label);
}

/**
 * The control called every `everyMs` (sized as `iterations`) until the returned stop() is awaited:
 * beside a plugin's calls, so it meets the machine as loaded as they do (the host takes a loaded
 * VM's cores away more often than an idle one's), and its long calls are the host's share of theirs.
 * It runs in a process of its own at SCHED_FIFO 10 when allowed (control-beside.mjs says why).
 */
export function controlBeside(url, iterations, everyMs = 5) {
  const child = spawn(process.execPath, [new URL('./control-beside.mjs', import.meta.url).pathname, url, String(iterations), String(everyMs)], { stdio: ['pipe', 'ignore', 'inherit'] });
  killOnExit(child.pid);
  try {
    execFileSync('chrt', ['-f', '-p', '10', String(child.pid)], { stdio: 'ignore' });
  } catch {}
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return async () => {
    child.stdin.end();
    await exited;
    forget(child.pid);
  };
}

/** Iterations of the control that take about `ms` in Redis now (a probe of 200 calls, logged and read back). */
export async function controlIterations(backend, ms) {
  const probe = 20_000;
  await logEveryCall(backend);
  for (let i = 0; i < 200; i++) await backend.evalScript(control, [], [probe]);
  const log = await backend.send(['SLOWLOG', 'GET', '-1']);
  await logNoCall(backend);
  const probeMs = median(log.filter(([, , , args]) => String(args[0]).toUpperCase() === 'EVALSHA').map(([, , micros]) => micros / 1000));
  return Math.max(1, Math.round((probe * ms) / probeMs));
}

// ---- statistics

/** The median: the middle value, or the mean of the middle two (nearest rank took the lower of them, which flattered an even number of rounds). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
/** The q-quantile (nearest rank) of xs. */
export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * q) - 1))];
}
/** The largest of many (spreading hundreds of thousands of arguments overflows the stack). */
export const largest = (xs) => xs.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
export const smallest = (xs) => xs.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
/** "median (min–max)". */
export function spread(xs, digits = 1) {
  return `${median(xs).toFixed(digits)} (${smallest(xs).toFixed(digits)}–${largest(xs).toFixed(digits)})`;
}
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
