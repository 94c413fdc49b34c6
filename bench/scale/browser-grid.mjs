// browser-grid at 100, 1,000 and 10,000 workers (bench/scale.mjs runs it).
// The workers are simulated heartbeaters with no browser: each beat is the
// real worker's (worker/instance.ts: the plugin's touchWorker script with every
// field a worker writes, PUBLISH on the capacity channel when free, GET of its
// shutdown command). A real proxy (with the default foreign-worker watch:
// keyspace notifications) and a real reaper run as coord processes of their own
// on the same redis-server. Per size and round:
//  1. the fleet registers: used_memory before and after, per worker;
//  2. Redis's CPU per heartbeat (2,000 beats, one after another, cycling over
//     the fleet), per selection and per release (1,000 each, selectWorker and
//     releaseConnection called as admission and the leases do, 200 selections
//     then their 200 releases), with nothing else running; then the same work
//     again with SLOWLOG at 0 µs for the calls' times;
//  3. the fleet beats every 5 s (as workers do) while /status and /v1/capacity
//     are asked of the proxy in turn, one at a time, until shortly before the
//     reaper's next pass;
//  4. the fleet stops and every worker's heartbeat is made stale (one more
//     touchWorker each, with an old lastHeartbeat): the reaper's pass removes
//     them all, timed from its reapWorkers calls in SLOWLOG (their nowMs
//     arguments and times in Redis).
// staleThreshold is 20 s (the fleet beats every 5 s, and at most a few seconds
// of measuring pass between sweeps); the reaper runs every 21 s, the least
// the config allows. SCALE_SIZES=100,1000 runs only those sizes (a quick look).
import { randomBytes, randomUUID } from 'node:crypto';
import { scenarioContext } from '../../dist/conformance/scenario-context.js';
import { loadScriptDir } from '../../dist/core/scripts.js';
import plugin from '../../dist/plugins/browser-grid/index.js';
import { releaseConnection, selectKeys, selectWorker, touchWorker } from '../../dist/plugins/browser-grid/scripts.js';
import { gridStatus } from '../../dist/plugins/browser-grid/status.js';
import { coord } from '../../dist/test/support/cli.js';
import { freePort } from '../../dist/test/support/redis.js';
import { commandStats, controlCost, forget, killOnExit, loadScripts, logEveryCall, logNoCall, median, processCpuMs, redisCost, scriptCalls, sleep, timed, usedMemory } from './kit.mjs';

const PREFIX = '{scale}:';
const STALE_S = 20;
const REAP_EVERY_S = STALE_S + 1;
const BEAT_EVERY_MS = 5000;
const HEARTBEATS = 2000;
const SELECTIONS = 1000;
/** Selections made before they are released: at 100 workers of 5 slots, 2 in 5 busy. */
const HELD = 200;
const STATUS_SAMPLES = 6;
const VERSION = '1.65.1';
const TTL_S = 60; // redisKeyTtl's default
const config = { maxLifetimeSessions: 999_999, staleThreshold: STALE_S, reaperRunInterval: REAP_EVERY_S };
const sets = Object.entries(config).flatMap(([k, v]) => ['--set', `browser-grid.${k}=${v}`]);
const type = { browserType: 'chromium' };

/** N workers beating as worker/instance.ts does, without browsers. */
class Fleet {
  constructor(ctx, size) {
    this.ctx = ctx;
    const startedAt = Math.floor(Date.now() / 1000);
    this.workers = Array.from({ length: size }, (_, i) => {
      const id = randomUUID();
      const ws = `ws://127.0.0.1:${20000 + (i % 40000)}/${randomBytes(16).toString('hex')}`;
      return {
        id,
        ref: `chromium:${id}`,
        command: ctx.keys.shutdownCommand({ ...type, workerId: id }),
        fields: (beatS) => ['id', id, 'browserType', 'chromium', 'wsEndpoint', ws, 'endpoint', ws, 'cdpEndpoint', `ws://127.0.0.1:${20001 + (i % 40000)}/${id.replaceAll('-', '')}`,
          'status', 'available', 'lastHeartbeat', beatS, 'startedAt', startedAt, 'version', VERSION],
      };
    });
    this.capacity = ctx.channels.capacity(type);
    this.longestGapMs = 0;
    this.lastSweepStart = undefined;
  }

  /** One worker's heartbeat (its lastHeartbeat `beatS`, now by default). */
  async beat(w, beatS = Math.floor(Date.now() / 1000)) {
    const { free } = await touchWorker(this.ctx, w.ref, TTL_S, w.fields(beatS));
    if (free) await this.ctx.backend.send(['PUBLISH', this.capacity, w.ref]);
    await this.ctx.backend.send(['GET', w.command]);
  }

  /** Every worker beats once, 200 at a time (each its own sequence, as separate processes would). */
  async sweep(beatS) {
    const start = Date.now();
    this.sweeping = true;
    for (let i = 0; i < this.workers.length; i += 200) await Promise.all(this.workers.slice(i, i + 200).map((w) => this.beat(w, beatS)));
    this.sweeping = false;
    if (this.lastSweepStart !== undefined) this.longestGapMs = Math.max(this.longestGapMs, Date.now() - this.lastSweepStart);
    this.lastSweepStart = start;
  }

  /** A sweep, unless the last one began less than BEAT_EVERY_MS ago. */
  async freshen() {
    if (this.lastSweepStart === undefined || Date.now() - this.lastSweepStart >= BEAT_EVERY_MS) await this.sweep();
  }

  /** Sweeps every BEAT_EVERY_MS until stopBeating(); resolves when the first sweep is done. */
  keepBeating() {
    this.beating = true;
    let first;
    const swept = new Promise((resolve) => (first = resolve));
    this.loop = (async () => {
      while (this.beating) {
        const start = Date.now();
        await this.sweep();
        first();
        await new Promise((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, Math.max(0, start + BEAT_EVERY_MS - Date.now()));
        });
      }
    })();
    return swept;
  }

  async stopBeating() {
    this.beating = false;
    this.wake?.();
    await this.loop;
  }
}

export default {
  unit: 'worker',
  // SCALE_SIZES=100,1000 runs some of them (a quick look; the report's ratios need the first)
  sizes: process.env.SCALE_SIZES ? process.env.SCALE_SIZES.split(',').map(Number) : [100, 1000, 10_000],
  measures: [
    { key: 'beatCpu', label: 'Redis CPU per heartbeat: touchWorker, PUBLISH, GET', unit: 'µs', target: { flat: 1.5 } },
    { key: 'beatScript', label: 'touchWorker inside Redis (commandstats)', unit: 'µs per call' },
    { key: 'selectCpu', label: 'Redis CPU per selection: selectWorker', unit: 'µs', target: { flat: 1.5 } },
    { key: 'selectScript', label: 'selectWorker inside Redis (commandstats)', unit: 'µs per call' },
    { key: 'releaseCpu', label: 'Redis CPU per release: releaseConnection', unit: 'µs', target: { flat: 1.5 } },
    { key: 'unit', label: 'the control: Redis CPU per call of a fixed-work Lua loop (2,000 iterations), before and after these', unit: 'µs' },
    { key: 'beatUnits', label: 'heartbeat ÷ control (Redis CPU, in calls of the control)', unit: 'controls', digits: 2, target: { flat: 1.5 } },
    { key: 'selectUnits', label: 'selection ÷ control', unit: 'controls', digits: 2, target: { flat: 1.5 } },
    { key: 'releaseUnits', label: 'release ÷ control', unit: 'controls', digits: 2, target: { flat: 1.5 } },
    { key: 'status', label: '/status from the proxy, median of a round', unit: 'ms', target: { max: 100 } },
    { key: 'statusMax', label: '/status, longest of a round', unit: 'ms' },
    { key: 'statusQuiet', label: '/status asked while no sweep of the simulated fleet ran, median', unit: 'ms' },
    { key: 'capacity', label: '/v1/capacity from the proxy, median of a round', unit: 'ms', target: { max: 100 } },
    { key: 'capacityMax', label: '/v1/capacity, longest of a round', unit: 'ms' },
    { key: 'capacityQuiet', label: '/v1/capacity asked while no sweep ran, median', unit: 'ms' },
    { key: 'proxyCpu', label: "the proxy process's CPU while the fleet beats and these are asked", unit: '% of a core' },
    { key: 'reapPass', label: 'reaper pass removing every worker (all stale)', unit: 'ms' },
    { key: 'reapPerWorker', label: 'reaper pass per stale worker', unit: 'µs', target: { flat: 1.5 } },
    { key: 'reapLongest', label: 'longest reapWorkers call of the pass', unit: 'ms', digits: 2 },
    { key: 'memory', label: 'Redis memory per worker: used_memory delta / workers', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'dataset', label: 'Redis memory per worker, the data alone: used_memory_dataset delta / workers', unit: 'bytes', digits: 0, target: { flat: 1.5 } },
    { key: 'gap', label: "longest gap between a worker's heartbeats", unit: 's', digits: 1 },
  ],
  loggedCalls: 'of step 2 (heartbeats, selections, releases, and the readWorkers calls of three /status reads made in this process) and of the reaper pass (with the proxy\'s removeWorker calls for the workers it saw go)',

  async setup({ redis, backend, log }) {
    const ctx = scenarioContext({ plugin, backend, keyPrefix: PREFIX, signal: new AbortController().signal, config });
    const names = await loadScripts(backend, loadScriptDir(plugin.scripts, plugin.contract));
    const port = await freePort();
    const common = ['run', '--plugin', 'browser-grid', '--redis', redis.url, '--prefix', PREFIX, ...sets];
    const proxy = coord([...common, '--role', 'proxy', '--set', `browser-grid.port=${port}`, '--set', 'browser-grid.reaperInProxy=false']);
    const reaper = coord([...common, '--role', 'reaper']);
    for (const p of [proxy, reaper]) killOnExit(p.child.pid, true);
    await proxy.waitFor((l) => l.msg === 'ready', 60_000);
    await reaper.waitFor((l) => l.msg === 'reaper running', 60_000);
    const reaperStart = Date.now();
    log(`proxy on port ${port} and reaper running (passes every ${REAP_EVERY_S} s)`);
    return { ctx, backend, log, names, proxy, reaper, base: `http://127.0.0.1:${port}`, nextPass: reaperStart + REAP_EVERY_S * 1000, selectKeys: selectKeys(ctx, 'chromium', '1.65', 'bench') };
  },

  async round(s, size) {
    const { ctx, backend, log, names } = s;
    const values = {};
    const calls = [];
    const fleet = new Fleet(ctx, size);

    // 1. registration and memory
    await logNoCall(backend);
    const before = await usedMemory(backend);
    await fleet.sweep();
    await sleep(500); // the proxy reads the keyspace notifications of the registration
    const after = await usedMemory(backend);
    values.memory = (after.used - before.used) / size;
    values.dataset = (after.dataset - before.dataset) / size;

    // 2. costs with nothing else running, then the same work's call times
    const beats = (n) => async () => {
      for (let i = 0; i < n; i++) await fleet.beat(fleet.workers[i % size]);
      return n;
    };
    let connection = 0;
    const selections = async (n) => {
      const select = { ops: 0, cpu: 0, script: 0 };
      const release = { ops: 0, cpu: 0, script: 0 };
      const add = (sum, r) => {
        sum.cpu += r.cpuUs * r.ops;
        sum.script += r.scriptUs * r.ops;
        sum.ops += r.ops;
      };
      for (let done = 0; done < n; done += HELD) {
        const held = [];
        add(select, await redisCost(backend, async () => {
          for (let i = 0; i < HELD; i++) {
            const connectionId = `c${connection++}`;
            const r = await selectWorker(ctx, s.selectKeys, { connectionId, ticket: '', exclude: [], version: '1.65', protocol: 'playwright' });
            if (r[0] !== 'ok') throw new Error(`selectWorker at ${size} workers: ${r.join(' ')}`);
            held.push([r[1], connectionId]);
          }
          return HELD;
        }));
        add(release, await redisCost(backend, async () => {
          for (const [ref, connectionId] of held) await releaseConnection(ctx, 'bench', ref, connectionId, false);
          return held.length;
        }));
      }
      return { select: { cpuUs: select.cpu / select.ops, scriptUs: select.script / select.ops }, release: { cpuUs: release.cpu / release.ops, scriptUs: release.script / release.ops } };
    };
    await fleet.freshen();
    const unit0 = await controlCost(backend);
    const beat = await redisCost(backend, beats(HEARTBEATS));
    await fleet.freshen();
    const chosen = await selections(SELECTIONS);
    const unit = (unit0 + (await controlCost(backend))) / 2;
    Object.assign(values, {
      beatCpu: beat.cpuUs, beatScript: beat.scriptUs, selectCpu: chosen.select.cpuUs, selectScript: chosen.select.scriptUs, releaseCpu: chosen.release.cpuUs,
      beatUnits: beat.cpuUs / unit, selectUnits: chosen.select.cpuUs / unit, releaseUnits: chosen.release.cpuUs / unit, unit,
    });
    await fleet.freshen();
    await logEveryCall(backend);
    await beats(HEARTBEATS)();
    await selections(SELECTIONS);
    // the readWorkers calls of /status, as the proxy makes them
    for (let i = 0; i < 3; i++) await gridStatus(ctx, { nowMs: Date.now(), staleMs: STALE_S * 1000, maxConcurrent: 5 });
    calls.push(...(await scriptCalls(backend, names)));
    await logNoCall(backend);
    log(`  costs measured (${size} workers)`);

    // 3. /status and /v1/capacity while the fleet beats, until shortly before the reaper's next pass
    await fleet.keepBeating();
    const markMs = 2000 + size * 0.8; // making the fleet stale (about 5 s at 10,000 on a loaded machine), with room to spare
    const status = [];
    const capacity = [];
    /** Those of them asked while no sweep ran (the bench's own beats, on the same cores, compete with the proxy). */
    const quiet = { status: [], capacity: [] };
    const proxyCpu0 = processCpuMs(s.proxy.child.pid);
    const began = Date.now();
    let sampleMs = 1000;
    for (;;) {
      while (s.nextPass - markMs < Date.now()) s.nextPass += REAP_EVERY_S * 1000;
      const enough = status.length >= STATUS_SAMPLES && capacity.length >= STATUS_SAMPLES;
      if (enough && s.nextPass - markMs - Date.now() < sampleMs + 200) break;
      const start = Date.now();
      let calm = !fleet.sweeping;
      const a = await timed(`${s.base}/status`);
      status.push(a.ms);
      if (calm && !fleet.sweeping) quiet.status.push(a.ms);
      const grid = JSON.parse(a.body).types.chromium;
      if (grid.workers !== size || grid.stale !== 0) throw new Error(`/status at ${size} workers: ${grid.workers} workers, ${grid.stale} stale`);
      calm = !fleet.sweeping;
      capacity.push((await timed(`${s.base}/v1/capacity`)).ms);
      if (calm && !fleet.sweeping) quiet.capacity.push(capacity.at(-1));
      await sleep(250);
      sampleMs = Date.now() - start;
    }
    Object.assign(values, {
      status: median(status), statusMax: Math.max(...status), capacity: median(capacity), capacityMax: Math.max(...capacity),
      statusQuiet: quiet.status.length ? median(quiet.status) : undefined, capacityQuiet: quiet.capacity.length ? median(quiet.capacity) : undefined,
      proxyCpu: (100 * (processCpuMs(s.proxy.child.pid) - proxyCpu0)) / (Date.now() - began),
    });
    await fleet.stopBeating();
    values.gap = fleet.longestGapMs / 1000;
    log(`  /status and /v1/capacity ${status.length} times each; making the fleet stale for the pass in ${((s.nextPass - Date.now()) / 1000).toFixed(1)} s`);

    // 4. the reaper's pass over a stale fleet
    await logEveryCall(backend);
    await fleet.sweep(Math.floor(Date.now() / 1000) - 10 * STALE_S);
    // a pass that came while the fleet was being made stale removed only part of it: that round's pass is not counted
    const late = Date.now() > s.nextPass - 200;
    if (late) log(`  the fleet was made stale only ${s.nextPass - Date.now()} ms before the predicted pass: this round's pass is not counted`);
    const gone = Date.now() + REAP_EVERY_S * 2000 + 5000;
    while ((await backend.send(['ZCARD', ctx.keys.workerIndex(type)])) > 0) {
      if (Date.now() > gone) throw new Error(`the reaper left ${await backend.send(['ZCARD', ctx.keys.workerIndex(type)])} of ${size} workers`);
      await sleep(20);
    }
    // the proxy hears every worker's DEL and removes what is left of it: wait until it is done
    for (let last = -1, now = 0; last !== now; ) {
      last = now;
      await sleep(500);
      now = (await commandStats(backend)).evalsha?.calls ?? 0;
    }
    const logged = await scriptCalls(backend, names);
    await logNoCall(backend);
    const reap = logged.filter((c) => c.script === 'reapWorkers');
    const nowMs = (c) => Number(c.args[8]);
    // the pass that removed them: its calls are milliseconds apart, passes REAP_EVERY_S apart
    const last = reap.at(-1);
    const pass = reap.filter((c) => nowMs(last) - nowMs(c) < REAP_EVERY_S * 500);
    if (process.env.SCALE_DEBUG) console.error(pass.map((c) => `${nowMs(c)} ${c.ms}`).join('\n'), reap.length);
    if (!late) {
      values.reapPass = nowMs(last) + last.ms - nowMs(pass[0]);
      values.reapPerWorker = (values.reapPass * 1000) / size;
      values.reapLongest = Math.max(...pass.map((c) => c.ms));
    }
    s.nextPass = nowMs(last) + REAP_EVERY_S * 1000;
    calls.push(...logged.filter((c) => c.script !== 'touchWorker')); // the marking's touchWorker calls are the bench's
    log(`  reaper pass: ${values.reapPass?.toFixed(1)} ms, ${pass.length} reapWorkers calls`);
    return { values, calls };
  },

  async teardown(s) {
    if (!s) return;
    for (const p of [s.proxy, s.reaper]) {
      p.kill('SIGTERM');
      await Promise.race([p.exited, sleep(10_000)]);
      p.kill('SIGKILL');
      forget(p.child.pid);
    }
  },

  describe() {
    return [
      'Simulated workers (no browsers) beat as worker/instance.ts does: touchWorker with every field a worker writes, PUBLISH on the',
      'capacity channel when free, GET of the shutdown command. A real proxy (`coord run --plugin browser-grid --role proxy`, default',
      'settings: the foreign-worker watch on, so it hears every worker key\'s keyspace events) and a real reaper (`--role reaper`)',
      `run as processes of their own on the same redis-server; staleThreshold ${STALE_S} s, reaperRunInterval ${REAP_EVERY_S} s, maxConcurrentSessions 5,`,
      'maxLifetimeSessions 999,999 (so no worker is recycled during the run).',
      `Redis CPU: the redis-server main thread's CPU (INFO cpu, network included) over ${HEARTBEATS.toLocaleString('en')} heartbeats (one after another, cycling over the`,
      `fleet) and ${SELECTIONS.toLocaleString('en')} selections and releases (${HELD} selections, then their releases), nothing else running, divided by the calls;`,
      '"inside Redis": commandstats\' usec per EVALSHA over the same calls. /status and /v1/capacity: HTTP GET from this process to the',
      `proxy, time to the last byte, in turn (at least ${STATUS_SAMPLES} each per round) while the fleet beats every ${BEAT_EVERY_MS / 1000} s. Reaper pass: the fleet's`,
      'heartbeats made stale at once, timed from the first reapWorkers call of the pass to the end of its last (their nowMs arguments',
      'and SLOWLOG times). Memory: used_memory (and used_memory_dataset) after the fleet registered minus before, per worker.',
    ].join('\n');
  },
};
