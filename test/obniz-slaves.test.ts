// Many slaves in one process (`slaves: N`, issue 34) on real Redis: each runs
// exactly the devices of its own list (workers:{name}, as the docs lay them
// out), the process holds two Redis connections whatever N (CLIENT LIST), a
// broadcast reaches every slave through the one pub/sub connection, an
// obniz-app-sdk manager sees them as so many slaves; processes
// of many slaves: one killed -9 loses its devices to the other's slaves as a
// one-slave process does; bad values of --slaves are one line each.
import t from 'tap';
import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { memoryLogger } from '../core/logger.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/obniz/index.ts';
import type { Ctx } from '../plugins/obniz/context.ts';
import { readList } from '../plugins/obniz/fleet.ts';
import { SlaveHost } from '../plugins/obniz/roles/slave-host.ts';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, oneLineError, type CoordProcess } from './support/cli.ts';
import { deviceFile, devices, fastTimings, fixtures, recordEvents, startManager, type LifecycleEvent } from './support/obniz.ts';
import { SdkManager } from './support/obniz-sdk.ts';
import { until } from './support/until.ts';
import { startRedis } from './support/redis.ts';

buildIfStale();
const redis = await startRedis();
const backend: Backend = await createBackend({ url: redis.url });
const running: CoordProcess[] = [];
t.teardown(async () => {
  for (const p of running) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  await backend.close();
  await redis.stop();
});

/** CLIENT LIST's connections whose name starts with `prefix`. */
async function clients(prefix: string): Promise<string[]> {
  const list = String(await backend.send(['CLIENT', 'LIST']));
  return list.split('\n').filter((line) => line.trim()).map((line) => /\bname=(\S*)/.exec(line)?.[1] ?? '').filter((name) => name.startsWith(prefix));
}

t.test('40 slaves in one process: each runs its own list, two connections in all, every slave hears the broadcasts', async (t) => {
  const events = recordEvents();
  const prefix = '{host1}:';
  const hostBackend = await createBackend({ url: redis.url, clientName: 'slave-host' });
  const ctx = scenarioContext({
    plugin,
    backend: hostBackend,
    keyPrefix: prefix,
    signal: new AbortController().signal,
    logger: memoryLogger([]),
    config: { ...fastTimings, worker: join(fixtures, 'recording-worker.mjs'), instanceName: 'h', slaves: 40 },
    roles: ['slave'],
  }) as Ctx;
  const host = new SlaveHost(ctx);
  await host.start();
  const file = deviceFile(devices(200));
  const manager = await startManager(backend, prefix, 'm1', { devices: file.path });
  t.teardown(async () => {
    await manager.stop();
    await host.stop('test done');
    await hostBackend.close();
  });
  t.same(host.names.slice(0, 3), ['h-1', 'h-2', 'h-3'], 'named {instanceName}-1 … -N');
  const total = () => host.slaves.reduce((n, s) => n + s.running().length, 0);
  await until('200 workers running', () => total() === 200, 20_000);

  for (const slave of host.slaves) {
    const listed = [...(await readList(ctx, slave.name)).keys()].sort();
    t.same(slave.running().sort(), listed, `${slave.name} runs exactly workers:${slave.name}`);
  }
  t.same(new Set(host.slaves.map((s) => s.running().length)), new Set([5]), '5 devices each (200 over 40)');
  const started = events.filter((e) => e.ev === 'start');
  t.equal(new Set(started.map((e) => e.slave)).size, 40, 'every slave started workers under its own name');

  const connections = await clients('slave-host');
  t.equal(connections.length, 2, `two connections for 40 slaves: ${connections.join(', ')}`);
  t.same(await backend.send(['PUBSUB', 'NUMSUB', `${prefix}app`]), [`${prefix}app`, 1], 'the broadcast channel has one subscriber');

  // a broadcast keyRequest reaches every slave; each answers on its own channel
  const answers = await manager.request('ping');
  t.equal(Object.keys(answers).length, 200, 'request: every device answered');

  // every device changed: one synchronize, and every slave restarts its workers with the new configs
  events.length = 0;
  file.write(devices(200, 0, { configs: { n: 'changed' } }));
  await until('200 restarted', () => events.filter((e) => e.ev === 'start' && e.configs?.n === 'changed').length === 200, 20_000);
  const restartedBy = new Set(events.filter((e) => e.ev === 'start').map((e) => e.slave));
  t.equal(restartedBy.size, 40, 'the synchronize reached all 40 slaves');
});

t.test('under an obniz-app-sdk manager (bare keys): each slave of the process is one of its slaves, and answers its requests', async (t) => {
  const ctx = scenarioContext({
    plugin,
    backend,
    keyPrefix: '',
    signal: new AbortController().signal,
    logger: memoryLogger([]),
    config: { worker: join(fixtures, 'recording-worker.mjs'), instanceName: 'sdk-host', slaves: 4 },
    roles: ['slave'],
  }) as Ctx;
  const host = new SlaveHost(ctx);
  await host.start();
  const sdk = await new SdkManager(backend, 'sdk-m').startWait({ loops: false });
  t.teardown(async () => {
    await sdk.stop();
    await host.stop('test done');
  });
  const list = devices(8, 900);
  for (const device of list) await sdk.autoCreate(device.id, device);
  await sdk.synchronize();
  await until('8 running', () => host.slaves.reduce((n, s) => n + s.running().length, 0) === 8, 20_000);
  for (const slave of host.slaves) t.same(slave.running().sort(), [...(await readList(ctx, slave.name)).keys()].sort(), `${slave.name} runs what the SDK listed for it`);
  t.same(new Set(host.slaves.map((s) => s.running().length)), new Set([2]), 'the SDK spread 8 over the 4 slaves');
  t.equal(Object.keys(await sdk.request('ping')).length, 8, 'its broadcast request: every slave answered on its own channel');
});

t.test('a clean stop of a process of slaves hands their devices to the slaves outside it, none to a sibling', async (t) => {
  recordEvents();
  const prefix = '{host2}:';
  const make = (name: string, slaves: number) =>
    new SlaveHost(scenarioContext({
      plugin,
      backend,
      keyPrefix: prefix,
      signal: new AbortController().signal,
      logger: memoryLogger([]),
      config: { ...fastTimings, worker: join(fixtures, 'recording-worker.mjs'), instanceName: name, slaves },
      roles: ['slave'],
    }) as Ctx);
  const a = make('a', 10);
  const b = make('b', 5);
  await a.start();
  await b.start();
  const manager = await startManager(backend, prefix, 'm2', { devices: deviceFile(devices(60)).path });
  t.teardown(async () => {
    await manager.stop();
    await b.stop('test done');
  });
  const count = (h: SlaveHost) => h.slaves.reduce((n, s) => n + s.running().length, 0);
  await until('60 running', () => count(a) + count(b) === 60, 20_000);
  await a.stop('test');
  await until('all 60 on b', () => count(b) === 60, 20_000);
  t.same(new Set(b.slaves.map((s) => s.running().length)), new Set([12]), '12 on each of b\'s 5 slaves');
  t.same(await backend.send(['ZRANGE', `${prefix}obniz:slaves`, 0, -1]), b.names.sort(), 'a\'s slaves left the index');
});

t.test('processes of 10 slaves: one killed -9 loses its devices to the other process\'s slaves', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'obniz-slaves-'));
  const record = (name: string) => join(dir, `${name}.jsonl`);
  const timing = ['heartbeatInterval=1', 'heartbeatTtl=3', 'deadAfter=4', 'healthCheckInterval=1', 'claimRetryInterval=0.2', 'syncInterval=60', 'watchInterval=0.2'];
  const start = (role: 'slave' | 'manager', name: string, extra: string[]) => {
    const p = coord(['run', '--plugin', 'obniz', '--role', role, '--redis', redis.url, '--prefix', '{procs}:', '--instance-name', name, ...timing.flatMap((v) => ['--set', `obniz.${v}`]), ...extra], {
      OBNIZ_TEST_RECORD: record(name),
      OBNIZ_WORKER: join(fixtures, 'recording-worker.mjs'),
    });
    running.push(p);
    return p;
  };
  const p1 = start('slave', 'p1', ['--slaves', '10']);
  const p2 = start('slave', 'p2', ['--slaves', '10']);
  await Promise.all([p1, p2].map((p) => p.waitFor((line) => line.msg === 'slaves running', 60_000)));
  // the earlier tests' connections may take Redis a moment to see closed on a loaded machine
  const others = await until('4 connections besides the test\'s', async () => ((await clients('')).length - 1 === 4 ? 4 : 0), 10_000).catch(async () => (await clients('')).length - 1);
  t.equal(others, 4, 'two processes of 10 slaves: 4 connections besides the test\'s');
  start('manager', 'm', ['--devices', deviceFile(devices(100)).path]);

  const events = (): LifecycleEvent[] =>
    ['p1', 'p2'].flatMap((n) => (existsSync(record(n)) ? readFileSync(record(n), 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l) as LifecycleEvent) : []));
  /** Devices running now by slave, from the recorded starts and ends (nothing runs on p1 after its kill). */
  const runningBy = (skip: string) => {
    const out = new Map<string, Set<string>>();
    for (const e of events().sort((x, y) => x.t - y.t)) {
      if (e.slave.startsWith(skip)) continue;
      const set = out.get(e.slave) ?? new Set<string>();
      if (e.ev === 'start') set.add(e.id);
      if (e.ev === 'end') set.delete(e.id);
      out.set(e.slave, set);
    }
    return out;
  };
  const runningCount = (skip = '-') => [...runningBy(skip).values()].reduce((n, s) => n + s.size, 0);
  await until('100 running over 20 slaves', () => runningCount() === 100 && runningBy('-').size === 20, 60_000);
  const p1Devices = [...runningBy('p2-')].filter(([slave]) => slave.startsWith('p1-')).flatMap(([, ids]) => [...ids]);
  t.equal(p1Devices.length, 50, 'p1\'s 10 slaves run 50');

  const killedAt = Date.now();
  p1.kill('SIGKILL');
  await p1.exited;
  await until('p1\'s devices running on p2\'s slaves', () => runningCount('p1-') === 100, 60_000);
  const took = Date.now() - killedAt;
  t.ok(took < 20_000, `moved in ${(took / 1000).toFixed(1)} s (heartbeat TTL 3 s + dead after 4 s + a check each second)`);
  t.same(new Set([...runningBy('p1-').values()].map((s) => s.size)), new Set([10]), '10 on each of p2\'s 10 slaves');
});

t.test('bad --slaves values are one line each, exit 2', async (t) => {
  for (const value of ['0', 'x', '10001', '1.5']) {
    const r = coordSync(['run', '--plugin', 'obniz', '--role', 'slave', '--redis', redis.url, '--worker', join(fixtures, 'recording-worker.mjs'), '--slaves', value]);
    oneLineError(t, r, 2, /slaves/);
  }
});
