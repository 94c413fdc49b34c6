// obniz slaves and managers as real processes through Redis faults, with
// ioredis and node-redis side by side (each its own prefix, one fault for
// both), with the default heartbeat (every 10 s, TTL 20 s, dead after 30 s):
// (a) the Redis Cluster master of the deployment's slot killed -9 and its
// replica promoted, and (a2) the same behind Sentinel: no worker stops (or,
// past the safe window, they stop and come back within 2 s); (b) a 20 s DEBUG SLEEP: every worker stops before its slave's
// heartbeat could expire, and all run again within 2 s of the heartbeat being
// written again; (c) Redis lost for good: the workers stop within the
// documented bound (heartbeatTtl − min(2 s, (heartbeatTtl − heartbeatInterval)/2),
// 18 s) and the slave says so once. Never a device on two slaves at once.
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { buildIfStale } from './support/build.ts';
import { coord, type CoordProcess } from './support/cli.ts';
import { devices, fixtures, overlaps, type LifecycleEvent } from './support/obniz.ts';
import { startHaCluster, startSentinels, type Failover } from './support/redis-ha.ts';
import { startRedis } from './support/redis.ts';
import { until } from './support/until.ts';

buildIfStale();
const dir = mkdtempSync(join(tmpdir(), 'obniz-faults-'));
const procs: CoordProcess[] = [];
const clients: Backend[] = [];
t.teardown(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
});

const ADAPTERS = ['ioredis', 'node-redis'] as const;
type Adapter = (typeof ADAPTERS)[number];
const DEVICES = 100;
const TTL_MS = 20_000;
/** The documented stop bound with the defaults: heartbeatTtl − min(2 s, (heartbeatTtl − heartbeatInterval) / 2). */
const FENCE_MS = 18_000;
// The SDK's heartbeat defaults; a fast health check (the quickest a manager could move a dead slave's devices).
const timing = ['healthCheckInterval=1', 'claimRetryInterval=0.2', 'syncInterval=60', 'watchInterval=0.2'];
const sets = (values: string[]) => values.flatMap((v) => ['--set', `obniz.${v}`]);
let run = 0;

/** One adapter's deployment: a manager and two slaves as processes, their recorded worker events. */
interface Fleet {
  adapter: Adapter;
  prefix: string;
  slaves: string[];
  procs: Record<string, CoordProcess>;
  client: Backend;
  events(): LifecycleEvent[];
  /** Devices running now on any slave (from the recorded starts and ends), with the slaves running each. */
  running(): Map<string, Set<string>>;
  heartbeat(slave: string): Promise<number | null>;
}

async function fleet(url: string, adapter: Adapter, prefix: string): Promise<Fleet> {
  const tag = `${++run}-${adapter}`;
  const names = { manager: `m-${tag}`, slaves: [`a-${tag}`, `b-${tag}`] };
  const recordFile = (name: string) => join(dir, `${name}.jsonl`);
  const start = (role: 'slave' | 'manager', name: string, extra: string[] = []) => {
    const p = coord(['run', '--plugin', 'obniz', '--role', role, '--redis', url, '--adapter', adapter, '--prefix', prefix, ...sets([...timing, `instanceName=${name}`, ...extra])], {
      OBNIZ_TEST_RECORD: recordFile(name),
      OBNIZ_WORKER: join(fixtures, 'recording-worker.mjs'),
    });
    procs.push(p);
    return p;
  };
  const file = join(dir, `devices-${tag}.json`);
  writeFileSync(file, JSON.stringify(devices(DEVICES)));
  const slaveProcs = names.slaves.map((n) => start('slave', n));
  await Promise.all(slaveProcs.map((s) => s.waitFor((l) => l.msg === 'ready')));
  const manager = start('manager', names.manager, [`devices=${file}`]);
  await manager.waitFor((l) => l.msg === 'ready');
  // The test's own reads go through ioredis, whichever adapter the processes use.
  const client = await createBackend({ url, adapter: 'ioredis' });
  clients.push(client);
  const complete = (text: string) => text.slice(0, text.lastIndexOf('\n') + 1);
  const events = () =>
    names.slaves.flatMap((n) => (existsSync(recordFile(n)) ? complete(readFileSync(recordFile(n), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as LifecycleEvent) : []));
  const running = () => {
    const out = new Map<string, Set<string>>();
    for (const e of events().sort((a, b) => a.t - b.t)) {
      const on = out.get(e.id) ?? new Set<string>();
      if (e.ev === 'start') on.add(e.slave);
      if (e.ev === 'end') on.delete(e.slave);
      out.set(e.id, on);
    }
    for (const [id, on] of out) if (!on.size) out.delete(id);
    return out;
  };
  const f: Fleet = {
    adapter,
    prefix,
    slaves: names.slaves,
    procs: Object.fromEntries([[names.manager, manager], ...names.slaves.map((n, i) => [n, slaveProcs[i]!])]),
    client,
    events,
    running,
    heartbeat: async (slave) => {
      const v = (await client.send(['GET', `${prefix}slave:${slave}:heartbeat`])) as string | null;
      return v === null ? null : Number(v);
    },
  };
  await until(`${adapter}: ${DEVICES} workers running`, () => running().size === DEVICES, 30_000, 100);
  return f;
}

/** Kills a case's processes (before its Redis goes, so none of them outlives it into the next case). */
async function killAll(fleets: Fleet[]): Promise<void> {
  const mine = fleets.flatMap((f) => Object.values(f.procs));
  for (const p of mine) p.kill('SIGKILL');
  await Promise.all(mine.map((p) => p.exited));
}

const ends = (f: Fleet, after: number) => f.events().filter((e) => e.ev === 'end' && e.t >= after);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Each device's time without a worker since `after`: from a stop to its next start (to now if none yet); 0 for those never stopped. */
function downtime(f: Fleet, after: number): number[] {
  const events = f.events().sort((a, b) => a.t - b.t);
  const out: number[] = [];
  for (const e of events) {
    if (e.ev !== 'end' || e.t < after) continue;
    const next = events.find((n) => n.ev === 'start' && n.id === e.id && n.t >= e.t);
    out.push((next?.t ?? Date.now()) - e.t);
  }
  return out;
}

/**
 * A failover under both fleets (`fault` kills the master and resolves once a
 * replica is promoted): every slave writes its heartbeat again; no worker
 * stops, but on a slave whose heartbeat came back later than its stop bound
 * after its last write before the kill: its workers may stop, and run again
 * within 2 s of the heartbeat being written again. Never a device on two slaves.
 */
async function ridesThrough(t: Test, fleets: Fleet[], fault: () => Promise<Failover>): Promise<void> {
  const before = await Promise.all(fleets.map((f) => Promise.all(f.slaves.map(async (s) => (await f.heartbeat(s))!))));
  const failover = await fault();
  t.comment(`killed ${failover.killedPort}; ${failover.promotedPort} promoted ${secs(failover.promotedAt - failover.killedAt)} after the kill`);
  // Every slave's heartbeat, on the promoted master, polled for all at once: when each is written again.
  const back = await Promise.all(
    fleets.map((f) =>
      Promise.all(
        f.slaves.map((s) => until(`${f.adapter}: ${s}'s heartbeat written after the failover`, async () => ((await f.heartbeat(s).catch(() => null)) ?? 0) > failover.killedAt && Date.now(), 30_000, 50)),
      ),
    ),
  );
  for (const [n, f] of fleets.entries()) {
    t.comment(`${f.adapter}: heartbeats written again ${back[n]!.map((b) => secs(b - failover.killedAt)).join(', ')} after the kill`);
    const late = f.slaves.filter((_s, i) => back[n]![i]! - before[n]![i]! > FENCE_MS);
    const stopped = ends(f, failover.killedAt);
    const unexpected = stopped.filter((e) => !late.includes(e.slave));
    if (unexpected.length) {
      // The outage outlasted the safe window though the heartbeat says otherwise: what the slaves said.
      t.comment(`${f.adapter}: ${unexpected.length} workers stopped (outage past the safe window)`);
      for (const s of f.slaves) for (const l of f.procs[s]!.lines.filter((l) => l.level === 'warn' || l.level === 'error' || Number(l.level) >= 40 || /heartbeat|stopp|synchronized/.test(l.msg))) t.comment(`${s}: ${JSON.stringify(l)}`);
    }
    t.equal(unexpected.length, 0, `${f.adapter}: no worker stopped during the failover (but on a slave back past its safe window)`);
    if (late.length) {
      t.comment(`${f.adapter}: ${late.join(', ')} back past the safe window: its workers may stop and come back`);
      const lateBack = Math.max(...late.map((s) => back[n]![f.slaves.indexOf(s)]!));
      const allAt = await until(`${f.adapter}: all ${DEVICES} running again`, () => f.running().size === DEVICES && Date.now(), 10_000, 20);
      if (stopped.length) t.ok(allAt - lateBack <= 2000, `${f.adapter}: all running within 2 s of the heartbeat written again (${secs(allAt - lateBack)})`);
    }
    const down = downtime(f, failover.killedAt);
    t.comment(`${f.adapter}: device downtime ${down.length ? `${down.length} stops, ${secs(Math.min(...down))}–${secs(Math.max(...down))}` : 'none'}`);
    t.equal(f.running().size, DEVICES, `${f.adapter}: all ${DEVICES} running`);
    t.same(overlaps(f.events()), [], `${f.adapter}: never on two slaves`);
  }
}

t.test('(a) Redis Cluster: the master of the slot killed -9, its replica promoted', async (t) => {
  const cluster = await startHaCluster();
  let fleets: Fleet[] = [];
  t.teardown(async () => {
    await killAll(fleets);
    await cluster.stop();
  });
  // Both adapters' prefixes on the master that fails over.
  const target = cluster.masterOf('{obniz-io}:x');
  let other = 0;
  while (cluster.masterOf(`{obniz-nr${other}}:x`) !== target) other++;
  fleets = await Promise.all([fleet(cluster.url, 'ioredis', '{obniz-io}:'), fleet(cluster.url, 'node-redis', `{obniz-nr${other}}:`)]);
  await ridesThrough(t, fleets, () => cluster.failover('{obniz-io}:x'));
});

t.test('(a2) Sentinel: the master killed -9, the sentinels promote its replica', async (t) => {
  const sentinels = await startSentinels();
  let fleets: Fleet[] = [];
  t.teardown(async () => {
    await killAll(fleets);
    await sentinels.stop();
  });
  fleets = await Promise.all(ADAPTERS.map((a) => fleet(sentinels.url, a, `{obniz-${a}}:`)));
  await ridesThrough(t, fleets, () => sentinels.failover());
});

t.test('(b) a 20 s DEBUG SLEEP: workers stop before the heartbeat could expire, and are back within 2 s of it being written again', async (t) => {
  const redis = await startRedis({ args: ['--enable-debug-command', 'yes'] });
  let fleets: Fleet[] = [];
  t.teardown(async () => {
    await killAll(fleets);
    await redis.stop(true);
  });
  fleets = await Promise.all(ADAPTERS.map((a) => fleet(redis.url, a, `{obniz-${a}}:`)));
  const spy = await createBackend({ url: redis.url, adapter: 'ioredis' });
  const poller = await createBackend({ url: redis.url, adapter: 'ioredis' });
  clients.push(spy, poller);
  // The last heartbeats before the pause, read in the same pipeline as the DEBUG SLEEP (nothing runs in between).
  const keys = fleets.flatMap((f) => f.slaves.map((s) => `${f.prefix}slave:${s}:heartbeat`));
  const pausedAt = Date.now();
  const pause = spy.pipeline([...keys.map((k) => ['GET', k] as [string, string]), ['DEBUG', 'SLEEP', '20']]);
  // Then poll the heartbeats on another connection: each answer comes once Redis is awake.
  const before = ((await pause) as (string | null)[]).slice(0, keys.length).map(Number);
  const awakeAt = Date.now();
  t.comment(`paused ${secs(awakeAt - pausedAt)}`);
  const backAt = await Promise.all(
    keys.map((k, i) => until(`${k} written again`, async () => Number(await poller.send(['GET', k])) > before[i]! && Date.now(), 30_000, 20)),
  );
  let i = 0;
  for (const f of fleets) {
    const lastWrite = Object.fromEntries(f.slaves.map((s) => [s, before[i++]!]));
    const back = Math.max(...backAt.slice(i - f.slaves.length, i));
    const allAt = await until(`${f.adapter}: all ${DEVICES} running again`, () => f.running().size === DEVICES && Date.now(), 30_000, 20);
    t.comment(`${f.adapter}: heartbeats back ${secs(back - awakeAt)} after the pause ended; all ${DEVICES} workers running ${secs(allAt - back)} after the last heartbeat was written again`);
    for (const s of f.slaves) {
      const stopped = ends(f, pausedAt).filter((e) => e.slave === s);
      t.ok(stopped.length > 0, `${f.adapter}: ${s} stopped its workers`);
      const latest = Math.max(...stopped.map((e) => e.t));
      t.comment(`${f.adapter}: ${s} stopped ${stopped.length} workers, the last ${secs(latest - lastWrite[s]!)} after its last heartbeat (stop bound ${secs(FENCE_MS)}, expiry ${secs(TTL_MS)})`);
      t.ok(latest < lastWrite[s]! + TTL_MS, `${f.adapter}: ${s}'s workers stopped before its heartbeat could expire`);
    }
    t.ok(allAt - back <= 2000, `${f.adapter}: all running within 2 s of the heartbeat written again (${secs(allAt - back)})`);
    t.same(overlaps(f.events()), [], `${f.adapter}: never on two slaves`);
  }
});

t.test('(c) Redis lost for good: workers stop within the bound, and the slave says so once', async (t) => {
  const redis = await startRedis();
  let fleets: Fleet[] = [];
  t.teardown(async () => {
    await killAll(fleets);
    await redis.stop(true);
  });
  fleets = await Promise.all(ADAPTERS.map((a) => fleet(redis.url, a, `{obniz-${a}}:`)));
  const lastWrite = new Map<string, number>();
  for (const f of fleets) for (const s of f.slaves) lastWrite.set(s, (await f.heartbeat(s))!);
  const lostAt = Date.now();
  await redis.down();
  const deadline = Math.max(...lastWrite.values()) + FENCE_MS;
  await until('every worker stopped', () => fleets.every((f) => f.running().size === 0), deadline - Date.now() + 5000, 100);
  // Past the bound, nothing more is said: one line per slave.
  await new Promise((r) => setTimeout(r, 3000));
  for (const f of fleets) {
    for (const s of f.slaves) {
      const stopped = ends(f, lostAt).filter((e) => e.slave === s);
      const latest = Math.max(...stopped.map((e) => e.t));
      t.comment(`${f.adapter}: ${s} stopped ${stopped.length} workers, the last ${secs(latest - lastWrite.get(s)!)} after its last heartbeat (bound ${secs(FENCE_MS)})`);
      t.ok(latest <= lastWrite.get(s)! + FENCE_MS + 1000, `${f.adapter}: ${s} stopped them within the bound`);
      const said = f.procs[s]!.lines.filter((l) => /stopping every worker/.test(l.msg));
      t.equal(said.length, 1, `${f.adapter}: ${s} said so once`);
      const noisy = f.procs[s]!.lines.filter((l) => /heartbeat/.test(l.msg)).length;
      t.ok(noisy <= 3, `${f.adapter}: ${s} logged ${noisy} heartbeat lines, not one per retry`);
    }
  }
});
