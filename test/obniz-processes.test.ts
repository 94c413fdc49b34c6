// The main case with real processes on real Redis: 3 slaves and a
// manager (the built CLI), 300 devices from a file → ~100 workers each; one
// slave killed -9 → its devices run on the other two within heartbeat TTL +
// one check interval, none on two slaves at any moment (every start and end
// recorded); a 4th slave joins → `coord obniz relocate-all` balances within 1;
// list edits reach the workers; bad input is one line. Timings are scaled
// down (heartbeat 1 s, TTL 3 s, dead after 4 s, check every 1 s).
import t from 'tap';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, type CoordProcess } from './support/cli.ts';
import { devices, fixtures, overlaps, type LifecycleEvent } from './support/obniz.ts';
import { until } from './support/until.ts';
import { startRedis } from './support/redis.ts';

buildIfStale();
const redis = await startRedis();
const dir = mkdtempSync(join(tmpdir(), 'obniz-procs-'));
const running: CoordProcess[] = [];
t.teardown(async () => {
  for (const p of running) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  await redis.stop();
});

const TTL_S = 3;
const CHECK_S = 1;
const timing = ['heartbeatInterval=1', `heartbeatTtl=${TTL_S}`, 'deadAfter=4', `healthCheckInterval=${CHECK_S}`, 'claimRetryInterval=0.2', 'syncInterval=60', 'watchInterval=0.2'];
const sets = (values: string[]) => values.flatMap((v) => ['--set', `obniz.${v}`]);
const recordFile = (name: string) => join(dir, `${name}.jsonl`);

function start(role: 'slave' | 'manager', name: string, extra: string[] = []): CoordProcess {
  const p = coord(
    ['run', '--plugin', 'obniz', '--role', role, '--redis', redis.url, ...sets([...timing, `instanceName=${name}`, ...extra])],
    { OBNIZ_TEST_RECORD: recordFile(name), OBNIZ_WORKER: join(fixtures, 'recording-worker.mjs') },
  );
  running.push(p);
  return p;
}

/** The recorded events, complete lines only: a worker may be writing a line while the test reads the file. */
function events(names: string[]): LifecycleEvent[] {
  const complete = (text: string) => text.slice(0, text.lastIndexOf('\n') + 1);
  return names.flatMap((n) => (existsSync(recordFile(n)) ? complete(readFileSync(recordFile(n), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as LifecycleEvent) : []));
}

/** Devices running per slave now, from the recorded starts and ends (a killed slave runs nothing after its kill). */
function runningBy(names: string[], killed: Set<string> = new Set()): Map<string, Set<string>> {
  const out = new Map(names.map((n) => [n, new Set<string>()]));
  for (const e of events(names).sort((a, b) => a.t - b.t)) {
    if (killed.has(e.slave)) continue;
    if (e.ev === 'start') out.get(e.slave)!.add(e.id);
    if (e.ev === 'end') out.get(e.slave)!.delete(e.id);
  }
  return out;
}

const counts = (m: Map<string, Set<string>>) => Object.fromEntries([...m].map(([n, s]) => [n, s.size]));

t.test('3 slaves + 1 manager, 300 devices; kill -9 one; a 4th joins and relocate-all balances', async (t) => {
  const list = devices(300);
  const file = join(dir, 'devices.json');
  writeFileSync(file, JSON.stringify(list));
  const slaves = ['s1', 's2', 's3'].map((n) => start('slave', n));
  await Promise.all(slaves.map((s) => s.waitFor((l) => l.msg === 'ready')));
  const manager = start('manager', 'm1', [`devices=${file}`]);
  await manager.waitFor((l) => l.msg === 'ready');

  const all = ['s1', 's2', 's3', 's4'];
  await until('300 workers running', () => [...runningBy(all).values()].reduce((n, s) => n + s.size, 0) === 300, 30_000);
  t.same(counts(runningBy(all)), { s1: 100, s2: 100, s3: 100, s4: 0 }, '100 workers on each slave');
  t.equal(events(all).filter((e) => e.ev === 'install').length, 300, 'onInstall once per device');

  // kill -9 s1
  const s1Devices = [...runningBy(all).get('s1')!];
  const killedAt = Date.now();
  slaves[0]!.kill('SIGKILL');
  await slaves[0]!.exited;
  const killed = new Set(['s1']);
  await until('s1\'s devices running on s2 and s3', () => s1Devices.every((id) => runningBy(all, killed).get('s2')!.has(id) || runningBy(all, killed).get('s3')!.has(id)), 30_000);
  const restarts = events(all).filter((e) => e.ev === 'start' && s1Devices.includes(e.id) && e.slave !== 's1');
  const lastStart = Math.max(...restarts.map((e) => e.t));
  const took = lastStart - killedAt;
  t.ok(took <= (TTL_S + CHECK_S) * 1000 + 1000, `all 100 devices of s1 ran again ${took} ms after kill -9 (heartbeat TTL ${TTL_S} s + check ${CHECK_S} s, +1 s slack for 100 starts)`);
  t.same(counts(runningBy(all, killed)), { s1: 0, s2: 150, s3: 150, s4: 0 }, 'split between the two alive slaves');
  t.same(overlaps(events(all), (slave) => (slave === 's1' ? killedAt : Infinity)), [], 'no device ran on two slaves at once');
  t.ok(manager.lines.some((l) => l.msg === 'slave is dead: its devices moved' && l.slave === 's1' && l.devices === 100), 'the manager logged the death');

  // a 4th slave joins; relocate-all balances
  const s4 = start('slave', 's4');
  await s4.waitFor((l) => l.msg === 'ready');
  const relocate = coordSync(['obniz', 'relocate-all', '--redis', redis.url]);
  t.equal(relocate.status, 0, relocate.stderr);
  t.match(relocate.stdout, /^moved 100 devices; now s2 100, s3 100, s4 100\n$/);
  await until('s4 runs 100', () => runningBy(all, killed).get('s4')!.size === 100 && runningBy(all, killed).get('s2')!.size === 100, 20_000);
  const after = counts(runningBy(all, killed));
  t.same(after, { s1: 0, s2: 100, s3: 100, s4: 100 }, 'within 1 of each other');
  t.same(overlaps(events(all), (slave) => (slave === 's1' ? killedAt : Infinity)), [], 'still never twice: each moved device started on s4 after s2/s3 ended it');

  const status = coordSync(['obniz', 'status', '--json', '--redis', redis.url]);
  t.equal(status.status, 0, status.stderr);
  const parsed = JSON.parse(status.stdout) as { slaves: { name: string; alive: boolean; devices: number; running: number }[]; managers: { name: string; alive: boolean }[] };
  t.same(parsed.slaves.map((s) => [s.name, s.alive, s.devices, s.running]), [['s2', true, 100, 100], ['s3', true, 100, 100], ['s4', true, 100, 100]], 'status: s1 is gone, the others alive with 100 each');
  t.same(parsed.managers.map((m) => [m.name, m.alive]), [['m1', true]]);

  // list edits reach the workers (processes)
  const since = Date.now();
  const edited = [...list.slice(1, 299), { ...list[299]!, configs: { n: 'changed' } }, ...devices(1, 5000)];
  writeFileSync(file, JSON.stringify(edited));
  const newer = () => events(all).filter((e) => e.t >= since).sort((a, b) => a.t - b.t);
  await until('six more lifecycle events', () => newer().length >= 6, 10_000);
  const fresh = newer();
  t.ok(fresh.at(-1)!.t - since < 3000, `applied ${fresh.at(-1)!.t - since} ms after the file was written (the periodic sync is 60 s away)`);
  const of = (id: string) => fresh.filter((e) => e.id === id).map((e) => e.ev);
  t.same(of(list[0]!.id), ['uninstall', 'end'], 'removed');
  t.same(of(list[299]!.id), ['end', 'start'], 'changed: restarted');
  t.same(of(devices(1, 5000)[0]!.id), ['install', 'start'], 'added');

  for (const p of [manager, ...slaves.slice(1), s4]) p.kill('SIGTERM');
  for (const p of [manager, ...slaves.slice(1), s4]) t.equal(await p.exited, 0, 'SIGTERM stops cleanly');
  t.same(counts(runningBy(all, killed)), { s1: 0, s2: 0, s3: 0, s4: 0 }, 'every worker ran onEnd');
});

t.test('bad input through the CLI: each is one line and a non-zero exit; a TypeScript worker runs on Node', async (t) => {
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '[{"id": "a"},');
  const runs = [
    { args: ['--role', 'slave', '--set', `obniz.worker=${join(fixtures, 'broken-worker.mjs')}`], error: /^coord: role slave of plugin obniz failed to start: cannot load worker .*broken-worker\.mjs: SyntaxError: Unexpected token ';' \(at .*broken-worker\.mjs:4:\d+\)$/ },
    { args: ['--role', 'manager', '--set', `obniz.devices=${bad}`], error: /^coord: role manager of plugin obniz failed to start: devices file .*bad\.json:1:\d+: cannot parse: .+$/ },
    { args: ['--role', 'slave'], error: /^coord: role slave of plugin obniz failed to start: obniz\.worker is not set: a slave needs a worker module/ },
    { args: ['--set', 'obniz.heartbeatTtl=5'], error: /^coord: config: obniz\.heartbeatTtl \(5s\) must be greater than heartbeatInterval|deadAfter/ },
  ];
  for (const run of runs) {
    const r = coordSync(['run', '--plugin', 'obniz', '--redis', redis.url, '--set', 'obniz.instanceName=bad', ...run.args]);
    t.equal(r.status, 2, 'exit 2: the user\'s to fix, nothing started');
    const lines = r.stderr.trim().split('\n');
    t.equal(lines.length, 1, `one line: ${lines[0]}`);
    t.match(lines[0], run.error);
  }

  const file = join(dir, 'ts-devices.json');
  writeFileSync(file, JSON.stringify(devices(2, 700)));
  const p = coord(['run', '--plugin', 'obniz', '--redis', redis.url, '--prefix', '{ts}:', ...sets(['instanceName=ts1', `worker=${join(fixtures, 'ts-worker.ts')}`, `devices=${file}`])], { OBNIZ_TEST_RECORD: recordFile('ts1') });
  running.push(p);
  await until('the TypeScript worker started twice', () => events(['ts1']).filter((e) => e.ev === 'start').length === 2, 30_000);
  t.same(events(['ts1']).map((e) => (e as unknown as { text: string }).text).sort(), ['hello 0700-0000', 'hello 0701-0000'], 'with its .ts helper');
  const answer = coordSync(['obniz', 'request', 'k', '--device', '0700-0000', '--redis', redis.url, '--prefix', '{ts}:']);
  t.equal(answer.status, 0, answer.stderr);
  t.same(JSON.parse(answer.stdout), { '0700-0000': 'hello 0700-0000 (k)' }, 'coord obniz request --device');
  for (const [args, error] of [
    [['0700-0000'], 'NO_NEED_TO_RELOCATE: its slave ts1 is alive; add --force to move it anyway'],
    [['0700-0000', '--force'], 'NO_OTHER_ACCEPTABLE_WORKER'],
    [['nope'], 'NOT_INSTALLED'],
  ] as const) {
    const r = coordSync(['obniz', 'relocate', ...args, '--redis', redis.url, '--prefix', '{ts}:']);
    t.equal(r.status, 1);
    t.equal(r.stderr, `coord: relocating ${args[0]}: ${error}\n`, `coord obniz relocate ${args.join(' ')}: ${error.split(':')[0]}`);
  }
  p.kill('SIGTERM');
  t.equal(await p.exited, 0);
});
