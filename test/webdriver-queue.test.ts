// Multi-process on real Redis: proxy, manager and an orchestrator with 2
// slots as separate `coord run --role …` processes. 4 clients at once: 2 run
// while 2 wait, then those run; a client whose queue timeout passes gets
// `session not created` and QTIMEOUT is in its log; the queue timeout covers
// node start-up too unless manager.queueTimeout=slot.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { newSessionBody, w3c, type W3CAnswer } from './support/webdriver.ts';
import { until } from './support/until.ts';

buildIfStale();
const rig = await startPageRig(t, 'webdriver');
const { redis, backend, page } = rig;

const P = '{wq}:';
const fast = ['heartbeat.interval=1', 'heartbeat.nodeTtl=5', 'heartbeat.managerTtl=5', 'timeouts.slotReclaimInterval=5'];
const role = (name: string, sets: string[] = []) => rig.run(name, { prefix: P, sets: [...fast, ...sets] });

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const proxy = role('proxy', [`proxy.port=${port}`]);
const manager = role('manager');
const orchestrator = role('orchestrator', ['orchestrator.slots=2', 'orchestrator.id=orch-q']);
await ready(proxy, manager, orchestrator);

const states = async () => {
  const ids = (await backend.send(['SMEMBERS', `${P}sessions.active`])) as string[];
  const fields = await Promise.all(ids.map((id) => backend.send(['HMGET', `${P}session:${id}:status`, 'aliveAt', 'pendingAt']) as Promise<(string | null)[]>));
  return { alive: fields.filter((f) => f[0]).length, waiting: fields.filter((f) => !f[0] && !f[1]).length };
};
const logCodes = async (id: string) => ((await backend.send(['XRANGE', `${P}session:${id}:log`, '-', '+'])) as [string, string[]][]).map(([, f]) => f[f.indexOf('code') + 1]);

t.test('4 clients at once on 2 slots: 2 run while 2 wait, then those run', async (t) => {
  const answered: (W3CAnswer & { at: number })[] = [];
  const started = Date.now();
  const clients = Array.from({ length: 4 }, () => w3c(base, 'POST', '/session', newSessionBody()).then((a) => (answered.push({ ...a, at: Date.now() - started }), a)));
  await until('two sessions served', async () => answered.length >= 2, 90_000);
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(answered.length, 2, 'two clients got a session');
  t.ok(answered.every((a) => a.status === 200), 'both 200');
  t.same(await states(), { alive: 2, waiting: 2 }, 'Redis: 2 alive, 2 queued for a slot');
  const first = answered.map((a) => a.body.value!.sessionId!);
  for (const [i, id] of first.entries()) {
    t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/first${i}` })).status, 200);
    t.equal((await w3c(base, 'GET', `/session/${id}/title`)).body.value, `coord /first${i}`, 'a running session works');
  }
  for (const id of first) t.equal((await w3c(base, 'DELETE', `/session/${id}`)).status, 200);
  const all = await Promise.all(clients);
  t.ok(all.every((a) => a.status === 200), 'the two that waited got their sessions when the first two quit');
  const second = all.map((a) => a.body.value!.sessionId!).filter((id) => !first.includes(id));
  t.equal(second.length, 2);
  for (const id of second) {
    t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/second` })).status, 200);
    t.equal((await w3c(base, 'GET', `/session/${id}/title`)).body.value, 'coord /second');
    t.ok((await logCodes(id)).includes('NALIVE'));
  }
  t.ok(answered[2]!.at > answered[1]!.at, `served in two waves (${answered.map((a) => a.at).join(', ')} ms)`);
  for (const id of second) await w3c(base, 'DELETE', `/session/${id}`);
  await until('both slots free', async () => (await backend.send(['LLEN', `${P}orchestrator:orch-q:slots.available`])) === 2, 10_000);
  t.pass('both slots are available again');
});

t.test('a client whose queue timeout passes gets session not created, with QTIMEOUT in its log', async (t) => {
  const held = await Promise.all([1, 2].map(() => w3c(base, 'POST', '/session', newSessionBody())));
  t.ok(held.every((a) => a.status === 200), 'both slots taken');
  await backend.send(['HSET', `${P}timeouts`, 'queue', '2']); // the grid-wide timeout, changed live
  const started = Date.now();
  const late = await w3c(base, 'POST', '/session', newSessionBody());
  const waited = Date.now() - started;
  t.equal(late.status, 500);
  t.equal(late.body.value?.error, 'session not created');
  t.match(late.body.value?.message, /queue timeout \(2 s\)/);
  t.ok(waited >= 1900 && waited < 6000, `answered after the queue timeout (${waited} ms)`);
  const terminated = (await backend.send(['SMEMBERS', `${P}sessions.terminated`])) as string[];
  const codes = await Promise.all(terminated.map(logCodes));
  t.ok(codes.some((c) => c.join() === 'QUEUED,QTIMEOUT'), 'its log: QUEUED, QTIMEOUT');
  t.equal(await backend.send(['HGET', `${P}metrics:sessions:log:fail`, 'QTIMEOUT']), '1', 'counted in metrics:sessions:log:fail');
  for (const a of held) await w3c(base, 'DELETE', `/session/${a.body.value!.sessionId}`);
  await backend.send(['HSET', `${P}timeouts`, 'queue', '600']);
});

t.test('the queue timeout covers the whole request by default (Selenium Grid\'s session-request-timeout); manager.queueTimeout=slot: the slot wait only', async (t) => {
  const W = '{wt}:';
  const dir = mkdtempSync(join(tmpdir(), 'coord-wd-queue-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // a chromedriver that takes 6 s to start: node start-up outlasts the 3 s queue timeout, with a slot free at once
  const slowDriver = join(dir, 'slow-chromedriver');
  writeFileSync(slowDriver, '#!/bin/sh\nsleep 6\nexec /usr/bin/chromedriver "$@"\n');
  chmodSync(slowDriver, 0o755);
  const timeouts = [...fast, 'timeouts.queue=3', 'timeouts.sessionTermination=3'];
  const wPort = await freePort();
  const wBase = `http://127.0.0.1:${wPort}`;
  const wProxy = rig.run('proxy', { prefix: W, sets: [...timeouts, `proxy.port=${wPort}`] });
  const whole = rig.run('manager', { prefix: W, sets: timeouts });
  const slow = rig.run('orchestrator', { prefix: W, sets: [...timeouts, 'orchestrator.slots=1', 'orchestrator.id=orch-t', `orchestrator.driverBinary=${slowDriver}`, 'orchestrator.warmDrivers=0'] });
  await ready(wProxy, whole, slow);

  let started = Date.now();
  const cut = await w3c(wBase, 'POST', '/session', newSessionBody());
  let waited = Date.now() - started;
  t.equal(cut.status, 500);
  t.equal(cut.body.value?.error, 'session not created');
  t.match(cut.body.value?.message, /queue timeout \(3 s\), which covers the whole request/);
  t.ok(waited >= 2900 && waited < 6000, `answered at the queue timeout though a slot was free at once: node start-up counts (${waited} ms)`);
  await until('the slot is back', async () => (await backend.send(['LLEN', `${W}orchestrator:orch-t:slots.available`])) === 1, 30_000);

  whole.kill('SIGTERM');
  t.equal(await whole.exited, 0);
  const slotOnly = rig.run('manager', { prefix: W, sets: [...timeouts, 'manager.queueTimeout=slot'] });
  await ready(slotOnly);
  started = Date.now();
  const served = await w3c(wBase, 'POST', '/session', newSessionBody());
  waited = Date.now() - started;
  t.equal(served.status, 200, 'manager.queueTimeout=slot: the slot came at once, so node start-up may take its own timeout');
  t.ok(waited >= 3000, `served after ${waited} ms, past the 3 s queue timeout`);
  await w3c(wBase, 'DELETE', `/session/${served.body.value!.sessionId}`);
  for (const p of [wProxy, slotOnly, slow]) p.kill('SIGTERM');
  t.same(await Promise.all([wProxy, slotOnly, slow].map((p) => p.exited)), [0, 0, 0]);
});

t.test('coord webdriver sessions lists every session with its state and timings', async (t) => {
  const { coordSync } = await import('./support/cli.ts');
  const r = coordSync(['webdriver', 'sessions', '--redis', redis.url, '--prefix', P]);
  t.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  t.match(lines[0], /^session\s+state\s+queued at\s+queued\s+startup\s+alive\s+browser\s+slot\s+last$/);
  t.equal(lines.length, 2 + 7, 'a header, a rule and 7 sessions');
  t.equal(lines.filter((l) => / terminated /.test(l)).length, 7);
  t.ok(lines.slice(2).filter((l) => /chrome 156/.test(l)).length === 6, 'six were served by chrome 156');
  t.match(r.stdout, /QTIMEOUT/);
  const json = JSON.parse(coordSync(['webdriver', 'sessions', '--redis', redis.url, '--prefix', P, '--json']).stdout) as { state: string; timings: { startup?: number } }[];
  t.equal(json.length, 7);
  t.ok(json.filter((s) => s.timings.startup !== undefined).every((s) => s.timings.startup! > 0), 'startup timings');
});

t.test('SIGTERM: every process stops cleanly', async (t) => {
  for (const p of [proxy, manager, orchestrator]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, manager, orchestrator].map((p) => p.exited)), [0, 0, 0]);
});
