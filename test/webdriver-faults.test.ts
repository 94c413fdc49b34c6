// Faults on real Redis with separate coord processes: a node killed -9
// mid-session (its session terminated and slot reclaimed within one reclaim
// interval), the orchestrator killed -9 while sessions are pending (after a
// restart the backlog and pending lists have lost nothing), the manager
// killed while a client waits (the slot comes back); an inline orchestrator
// killed -9 leaves no chromedriver or Chromium behind; slowloris and garbage
// connections are closed within the header timeout while a session is served;
// 300 slow connections from one address do not lock out a selenium-webdriver
// client from that address.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { isRunning, descendants as pidsUnder } from '../plugins/browser-grid/cdp/process-tree.ts';
import { buildIfStale } from './support/build.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { chromeOptions, newSessionBody, w3c, type W3CAnswer } from './support/webdriver.ts';
import { until } from './support/until.ts';

buildIfStale();
const rig = await startPageRig(t, 'webdriver');
const { backend, page } = rig;
const dir = mkdtempSync(join(tmpdir(), 'coord-wd-faults-'));
/** A chromedriver that takes 4 s to start: a window in which sessions sit in pending. */
const slowDriver = join(dir, 'slow-chromedriver');
writeFileSync(slowDriver, '#!/bin/sh\nsleep 4\nexec /usr/bin/chromedriver "$@"\n');
chmodSync(slowDriver, 0o755);
rig.atEnd(() => rmSync(dir, { recursive: true, force: true }));

const fast = ['heartbeat.interval=1', 'heartbeat.nodeTtl=3', 'heartbeat.managerTtl=3', 'timeouts.slotReclaimInterval=5', 'gc.interval=1'];
const role = (prefix: string, name: string, sets: string[] = []) => rig.run(name, { prefix, sets: [...fast, ...sets] });
const log = async (prefix: string, id: string) => ((await backend.send(['XRANGE', `${prefix}session:${id}:log`, '-', '+'])) as [string, string[]][]).map(([, f]) => ({ code: f[f.indexOf('code') + 1]!, meta: f[f.indexOf('meta') + 1]! }));
const list = (key: string) => backend.send(['LRANGE', key, 0, -1]) as Promise<string[]>;
/** Every process under `root` (children, grandchildren, …) with its command, from /proc. */
const descendants = (root: number) => pidsUnder(root).map((pid) => ({ pid, cmd: cmdline(pid) }));
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
};
/** Running: it exists and is not a zombie waiting to be reaped. */
const running = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};
const nodeFolders = () => readdirSync(tmpdir()).filter((n) => n.startsWith('coord-webdriver-node-'));

/** Session IDs in sessions.active, oldest first. */
const activeSessions = async (prefix: string) => {
  const ids = (await backend.send(['SMEMBERS', `${prefix}sessions.active`])) as string[];
  const at = await Promise.all(ids.map((id) => backend.send(['HGET', `${prefix}session:${id}:status`, 'queuedAt']) as Promise<string>));
  return ids.map((id, i) => [id, at[i]!] as const).sort((a, b) => a[1].localeCompare(b[1])).map(([id]) => id);
};

t.test('a node process killed -9 mid-session: session terminated and slot reclaimed within one reclaim interval', async (t) => {
  const P = '{wn}:';
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const foldersBefore = nodeFolders();
  const procs = [role(P, 'proxy', [`proxy.port=${port}`]), role(P, 'manager'), role(P, 'orchestrator', ['orchestrator.slots=1', 'orchestrator.id=orch-n', 'orchestrator.nodeMode=process'])];
  await ready(...procs);
  const created = await w3c(base, 'POST', '/session', newSessionBody());
  t.equal(created.status, 200, 'a session, served by a node process');
  const id = created.body.value!.sessionId!;
  t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/n` })).status, 200);
  const boot = (await log(P, id)).find((e) => e.code === 'BOOT')!;
  const nodePid = Number(/pid (\d+)/.exec(boot.meta)?.[1]);
  t.ok(nodePid > 0 && nodePid !== procs[2]!.child.pid, `the node is its own process (pid ${nodePid})`);
  t.same(nodeFolders().filter((n) => !foldersBefore.includes(n)), [], 'no config folder in /tmp: the node got its config on stdin');
  t.match(cmdline(nodePid), /--config=-$/, 'its config came on stdin');
  const chromePid = Number(created.body.value!.capabilities!['goog:processID']);

  const killed = Date.now();
  process.kill(nodePid, 'SIGKILL');
  await until('session terminated and slot back', async () => {
    const [terminated, available, reclaimed] = await Promise.all([
      backend.send(['SISMEMBER', `${P}sessions.terminated`, id]),
      list(`${P}orchestrator:orch-n:slots.available`),
      list(`${P}orchestrator:orch-n:slots.reclaimed`),
    ]);
    return terminated === 1 && [...available, ...reclaimed].includes('orch-n:1');
  }, 5000);
  const took = Date.now() - killed;
  t.ok(took < 5000, `terminated and reclaimed ${took} ms after the kill (reclaim interval 5 s)`);
  t.equal(await backend.send(['HGET', `${P}metrics:slots:reclaimed.total`, 'dead']), '1', 'counted as reclaimed from a dead session');
  t.match((await log(P, id)).at(-1), { code: 'TERM' }, 'its log ends with TERM');
  await until('its Chromium is gone too', async () => !isRunning(chromePid), 5000);
  t.pass(`Chromium (pid ${chromePid}) went with the node's process group`);
  const answer = await w3c(base, 'GET', `/session/${id}/title`);
  t.equal(answer.status, 404, 'the client now gets 404');
  t.equal(answer.body.value?.error, 'invalid session id');
  const again = await w3c(base, 'POST', '/session', newSessionBody());
  t.equal(again.status, 200, 'the reclaimed slot serves a new session');
  await w3c(base, 'DELETE', `/session/${again.body.value!.sessionId}`);
  for (const p of procs) p.kill('SIGTERM');
  t.same(await Promise.all(procs.map((p) => p.exited)), [0, 0, 0]);
});

t.test('the orchestrator killed -9 while sessions are pending: after a restart the backlog and pending lists lose nothing', async (t) => {
  const P = '{wo}:';
  const O = `${P}orchestrator:orch-o`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proxy = role(P, 'proxy', [`proxy.port=${port}`]);
  const manager = role(P, 'manager');
  const doomed = role(P, 'orchestrator', ['orchestrator.slots=3', 'orchestrator.id=orch-o', `orchestrator.driverBinary=${slowDriver}`, 'orchestrator.warmDrivers=0']);
  await ready(proxy, manager, doomed);
  const answers: Promise<W3CAnswer>[] = [1, 2].map(() => w3c(base, 'POST', '/session', newSessionBody()));
  await until('two sessions pending', async () => (await list(`${O}:pending`)).length === 2, 20_000);
  const pending = await list(`${O}:pending`);
  doomed.kill('SIGKILL');
  await doomed.exited;
  t.same((await list(`${O}:pending`)).sort(), [...pending].sort(), 'pending keeps both sessions after the crash');
  answers.push(w3c(base, 'POST', '/session', newSessionBody()));
  await until('a third session in the backlog', async () => (await list(`${O}:backlog`)).length === 1, 20_000);
  const [third] = await list(`${O}:backlog`);
  t.notOk(pending.includes(third!), 'a new session waits in the backlog while no orchestrator runs');

  const restarted = role(P, 'orchestrator', ['orchestrator.slots=3', 'orchestrator.id=orch-o']);
  await ready(restarted);
  t.ok(restarted.lines.some((l) => l.msg === 'recovering pending sessions'), 'the restarted orchestrator recovers what was pending');
  const served = await Promise.all(answers);
  t.same(served.map((a) => a.status), [200, 200, 200], 'all three clients got their session');
  t.same(served.map((a) => a.body.value!.sessionId).sort(), [...pending, third].sort(), 'exactly the sessions that were pending and in the backlog');
  t.same([await list(`${O}:pending`), await list(`${O}:backlog`)], [[], []], 'both lists are empty again');
  for (const a of served) {
    const id = a.body.value!.sessionId!;
    t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/o` })).status, 200);
    t.equal((await w3c(base, 'GET', `/session/${id}/title`)).body.value, 'coord /o');
    t.ok((await log(P, id)).some((e) => e.code === 'SCHED'));
    await w3c(base, 'DELETE', `/session/${id}`);
  }
  for (const p of [proxy, manager, restarted]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, manager, restarted].map((p) => p.exited)), [0, 0, 0]);
});

t.test('the manager killed while a client waits: the slot comes back', async (t) => {
  const P = '{wm}:';
  const O = `${P}orchestrator:orch-m`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proxy = role(P, 'proxy', [`proxy.port=${port}`]);
  const gc = role(P, 'gc');
  const orchestrator = role(P, 'orchestrator', ['orchestrator.slots=1', 'orchestrator.id=orch-m', `orchestrator.driverBinary=${slowDriver}`, 'orchestrator.warmDrivers=0']);
  const first = role(P, 'manager');
  await ready(proxy, gc, orchestrator, first);

  // killed after it allocated the slot, while the node starts
  const waiting = w3c(base, 'POST', '/session', newSessionBody());
  await until('slot allocated', async () => (await backend.send(['HLEN', `${O}:slots.held`])) === 1, 20_000);
  const [id] = await activeSessions(P);
  first.kill('SIGKILL');
  const answer = await waiting;
  t.equal(answer.status, 500, 'the waiting client gets an answer');
  t.equal(answer.body.value?.error, 'session not created');
  await until('the slot is available again', async () => (await list(`${O}:slots.available`)).join() === 'orch-m:1', 20_000);
  t.pass('the slot came back');
  t.match((await log(P, id!)).find((e) => e.code === 'TERM'), { meta: /manager left/ }, 'the node saw its manager gone before the client was served: TERM');
  t.equal(await backend.send(['SISMEMBER', `${P}sessions.terminated`, id!]), 1);

  // killed while its client waits in the queue for the one slot
  const second = role(P, 'manager');
  await ready(second);
  const holder = await w3c(base, 'POST', '/session', newSessionBody());
  t.equal(holder.status, 200, 'another client holds the only slot');
  const queued = w3c(base, 'POST', '/session', newSessionBody());
  await until('a second session queued', async () => (await activeSessions(P)).length === 2, 10_000);
  const [, queuedId] = await activeSessions(P);
  second.kill('SIGKILL');
  t.equal((await queued).status, 500, 'the queued client gets session not created');
  await until('gc ends the abandoned session', async () => (await backend.send(['SISMEMBER', `${P}sessions.terminated`, queuedId!])) === 1, 15_000);
  t.match((await log(P, queuedId!)).at(-1), { code: 'TERM', meta: /gc: neither/ }, 'gc terminated it: no heartbeat from node or manager');
  t.equal((await w3c(base, 'DELETE', `/session/${holder.body.value!.sessionId}`)).status, 200);
  await until('the slot is available', async () => (await list(`${O}:slots.available`)).join() === 'orch-m:1', 10_000);
  await new Promise((r) => setTimeout(r, 1500));
  t.same(await list(`${O}:slots.available`), ['orch-m:1'], 'and stays there: no dead waiter took it');
  for (const p of [proxy, gc, orchestrator]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, gc, orchestrator].map((p) => p.exited)), [0, 0, 0]);
});

t.test('an inline orchestrator killed -9 (the process alone): its chromedrivers and Chromium die with it', async (t) => {
  const P = '{wk}:';
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proxy = role(P, 'proxy', [`proxy.port=${port}`]);
  const manager = role(P, 'manager');
  const doomed = role(P, 'orchestrator', ['orchestrator.slots=2', 'orchestrator.id=orch-k', 'orchestrator.warmDrivers=1']);
  await ready(proxy, manager, doomed);
  const created = await w3c(base, 'POST', '/session', newSessionBody());
  t.equal(created.status, 200, 'a live session');
  const id = created.body.value!.sessionId!;
  t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/k` })).status, 200);
  const pid = doomed.child.pid!;
  const isDriver = (p: { cmd: string }) => /^\S*chromedriver --port/.test(p.cmd); // not its watchdog (bash -c …)
  const tree = await until('a warm driver beside the session\'s', () => {
    const found = descendants(pid);
    return found.filter(isDriver).length >= 2 && found;
  }, 30_000);
  const drivers = tree.filter(isDriver);
  const browsers = tree.filter((p) => /chrom(e|ium)/i.test(p.cmd) && !/chromedriver/.test(p.cmd));
  t.ok(drivers.length >= 2, `${drivers.length} chromedrivers under the orchestrator`);
  t.ok(browsers.length >= 1, `${browsers.length} Chromium processes under it`);

  process.kill(pid, 'SIGKILL'); // the orchestrator alone, not its process group: no handler runs
  await doomed.exited;
  await until('every process it started is gone', () => tree.every((p) => !running(p.pid)), 15_000);
  t.ok(tree.some((p) => /coord-driver-watchdog/.test(p.cmd)), 'the drivers had their watchdogs');
  t.pass(`all ${tree.length} processes it had started are gone (drivers, Chromium, watchdogs)`);
  for (const p of [proxy, manager]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy.exited, manager.exited]), [0, 0]);
});

t.test('an inline orchestrator killed -9 mid-session: the client\'s next command says the node is gone and the slot is free at once; a restart frees the rest', async (t) => {
  const P = '{wk}:';
  const O = `${P}orchestrator:orch-k`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const nodeTtl = 30; // the heartbeat timeout: what the grid would otherwise wait for
  const ttl = [`heartbeat.nodeTtl=${nodeTtl}`, 'heartbeat.managerTtl=3', 'timeouts.slotReclaimInterval=60'];
  const proxy = role(P, 'proxy', [`proxy.port=${port}`, ...ttl]);
  const manager = role(P, 'manager', ttl);
  const orchestrator = () => role(P, 'orchestrator', ['orchestrator.slots=1', 'orchestrator.id=orch-k', 'orchestrator.warmDrivers=0', ...ttl]);
  const held = async () => (await backend.send(['HGETALL', `${O}:slots.held`])) as string[];
  const free = async () => [...(await list(`${O}:slots.available`)), ...(await list(`${O}:slots.reclaimed`))];
  const sessionOn = async () => {
    const created = await w3c(base, 'POST', '/session', newSessionBody());
    t.equal(created.status, 200, 'a session');
    const id = created.body.value!.sessionId!;
    t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/k9` })).status, 200);
    return id;
  };

  // 1. killed, then the client's next command
  let doomed = orchestrator();
  await ready(proxy, manager, doomed);
  const first = await sessionOn();
  const [slot] = await held();
  doomed.kill('SIGKILL');
  await doomed.exited;
  const killed = Date.now();
  const next = await w3c(base, 'GET', `/session/${first}/title`);
  const took = Date.now() - killed;
  t.equal(next.status, 404);
  t.equal(next.body.value!.error, 'invalid session id');
  t.match(next.body.value!.message, new RegExp(`the node of session ${first} is gone .*refuses connections`), `a clear error: ${next.body.value!.message}`);
  t.ok(took < nodeTtl * 1000, `within the heartbeat timeout (${took} ms, nodeTtl ${nodeTtl} s)`);
  t.same(await held(), [], 'the slot is no longer held');
  t.same(await free(), [slot], 'the slot is free (reclaimed, back in slots.available once an orchestrator runs)');
  t.equal(await backend.send(['SISMEMBER', `${P}sessions.active`, first]), 0, 'the session ended');
  t.ok((await log(P, first)).some((e) => e.code === 'TERM' && /is gone/.test(e.meta)), 'its log says why');
  t.match((await w3c(base, 'GET', `/session/${first}/title`)).body.value!.message, /does not exist or has ended/, 'later commands: ended');

  // 2. killed with no command from its client: the restarted orchestrator frees the slot at once
  doomed = orchestrator();
  await ready(doomed);
  const second = await sessionOn();
  doomed.kill('SIGKILL');
  await doomed.exited;
  t.same((await held()).filter((_v, i) => i % 2 === 1), [second], 'after the kill, the slot still shows held');
  const restartedAt = Date.now();
  const restarted = orchestrator();
  await ready(restarted);
  await until('the restarted orchestrator frees the slot', async () => (await held()).length === 0 && (await list(`${O}:slots.available`)).length === 1, 20_000);
  const freedIn = Date.now() - restartedAt;
  t.ok(freedIn < nodeTtl * 1000, `freed ${freedIn} ms after the restart began, before the node heartbeat (${nodeTtl} s) lapsed`);
  t.ok((await log(P, second)).some((e) => e.code === 'TERM' && /previous orchestrator process/.test(e.meta)), 'its log says why');
  const third = await sessionOn();
  t.equal((await w3c(base, 'GET', `/session/${third}/title`)).body.value, 'coord /k9', 'the freed slot serves a new session');
  t.equal((await w3c(base, 'DELETE', `/session/${third}`)).status, 200);
  for (const p of [proxy, manager, restarted]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, manager, restarted].map((p) => p.exited)), [0, 0, 0]);
});

t.test('100 slowloris and 100 garbage connections are closed within the header timeout, and a session is served throughout', async (t) => {
  const P = '{ws}:';
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const headerTimeout = 2;
  const proxy = role(P, 'proxy', [`proxy.port=${port}`, `proxy.headerTimeout=${headerTimeout}`]);
  const manager = role(P, 'manager');
  const orchestrator = role(P, 'orchestrator', ['orchestrator.slots=1', 'orchestrator.id=orch-s']);
  await ready(proxy, manager, orchestrator);

  const attackers: { socket: Socket; closedAt?: number; answer: string }[] = [];
  const timers: ReturnType<typeof setInterval>[] = [];
  const opened = Date.now();
  for (let i = 0; i < 200; i++) {
    const socket = connect(port, '127.0.0.1');
    const a = { socket, answer: '' } as (typeof attackers)[number];
    attackers.push(a);
    socket.on('data', (d) => (a.answer += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => (a.closedAt = Date.now()));
    const slowloris = i % 2 === 0;
    socket.on('connect', () => {
      socket.write(slowloris ? 'GET /status HTTP/1.1\r\nHost: x\r\n' : garbage());
      timers.push(setInterval(() => socket.writable && socket.write(slowloris ? `X-Slow-${i}: y\r\n` : garbage()), 300));
    });
  }
  t.teardown(() => timers.forEach(clearInterval));
  // meanwhile a real client gets a session and drives it
  const created = await w3c(base, 'POST', '/session', newSessionBody());
  t.equal(created.status, 200, 'a session is created while 200 bad connections are open');
  const id = created.body.value!.sessionId!;
  t.equal((await w3c(base, 'POST', `/session/${id}/url`, { url: `${page.url}/loris` })).status, 200);
  t.equal((await w3c(base, 'GET', `/session/${id}/title`)).body.value, 'coord /loris');
  await until('every bad connection closed', () => attackers.every((a) => a.closedAt), (headerTimeout + 8) * 1000);
  const slowest = Math.max(...attackers.map((a) => a.closedAt! - opened));
  t.ok(slowest < (headerTimeout + 6) * 1000, `all 200 closed, the last ${slowest} ms after they opened (header timeout ${headerTimeout} s)`);
  t.ok(attackers.filter((_a, i) => i % 2 === 0).every((a) => /^HTTP\/1\.1 408 /.test(a.answer)), 'each slowloris got 408');
  t.equal((await w3c(base, 'GET', `/session/${id}/title`)).body.value, 'coord /loris', 'the session is still served');
  t.equal((await w3c(base, 'DELETE', `/session/${id}`)).status, 200);
  for (const p of [proxy, manager, orchestrator]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, manager, orchestrator].map((p) => p.exited)), [0, 0, 0]);
});

t.test('300 slow connections from one address: a client from the same address is served throughout; the slow ones end with 408 (or 429 past the cap)', async (t) => {
  const P = '{wl}:';
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const headerTimeout = 6;
  const cap = 256; // proxy.maxConnectionsPerClient's default
  const proxy = role(P, 'proxy', [`proxy.port=${port}`, `proxy.headerTimeout=${headerTimeout}`]);
  const manager = role(P, 'manager');
  const orchestrator = role(P, 'orchestrator', ['orchestrator.slots=1', 'orchestrator.id=orch-l']);
  await ready(proxy, manager, orchestrator);

  // The client's session first: starting a browser on a loaded machine can take longer than the slow connections live.
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  const driver = await new webdriver.Builder().usingServer(base).forBrowser('chrome').setChromeOptions(options).build();

  const slow: { socket: Socket; closedAt?: number; answer: string }[] = [];
  const timers: ReturnType<typeof setInterval>[] = [];
  t.teardown(() => timers.forEach(clearInterval));
  const opened = Date.now();
  for (let i = 0; i < 300; i++) {
    const socket = connect(port, '127.0.0.1');
    const a = { socket, answer: '' } as (typeof slow)[number];
    slow.push(a);
    socket.on('data', (d) => (a.answer += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => (a.closedAt = Date.now()));
    socket.on('connect', () => {
      socket.write('GET /status HTTP/1.1\r\nHost: x\r\n');
      timers.push(setInterval(() => socket.writable && socket.write(`X-Slow-${i}: y\r\n`), 500));
    });
  }
  await until('the 300 slow connections are open', () => slow.every((a) => a.socket.readyState === 'open' || a.closedAt), 20_000);

  // a real selenium-webdriver client from the same address (127.0.0.1), served while the slow connections hold
  const statuses: number[] = [];
  let titles = 0;
  while (slow.some((a) => !a.closedAt) && Date.now() - opened < (headerTimeout + 20) * 1000) {
    statuses.push((await fetch(`${base}/status`)).status);
    await driver.get(`${page.url}/shared-${titles}`);
    t.equal(await driver.getTitle(), `coord /shared-${titles}`, `command ${titles} served while slow connections are open`);
    titles++;
  }
  await driver.quit();
  t.ok(titles >= 2, `the client was served ${titles} rounds while the slow connections were open`);
  t.ok(statuses.every((s) => s === 200), `every /status from the same address: 200 (${statuses.length})`);

  t.ok(slow.every((a) => a.closedAt), 'every slow connection closed');
  const timedOut = slow.filter((a) => /^HTTP\/1\.1 408 /.test(a.answer));
  const capped = slow.filter((a) => /^HTTP\/1\.1 429 /.test(a.answer));
  t.equal(timedOut.length + capped.length, 300, `each got 408 or 429 (${timedOut.length} + ${capped.length})`);
  t.ok(capped.length <= 300 - cap + 5, `at most the slow ones past the cap of ${cap} (some may count as slow only after others ended): 429`);
  const first408 = Math.min(...timedOut.map((a) => a.closedAt! - opened));
  const last = Math.max(...slow.map((a) => a.closedAt! - opened));
  t.ok(first408 >= headerTimeout * 1000 - 1000, `408 not before the header timeout (first ${first408} ms after they opened, timeout ${headerTimeout} s)`);
  t.ok(last < (headerTimeout + 8) * 1000, `all closed by ${last} ms`);
  for (const p of [proxy, manager, orchestrator]) p.kill('SIGTERM');
  t.same(await Promise.all([proxy, manager, orchestrator].map((p) => p.exited)), [0, 0, 0]);
});

/** Random bytes without a line break: never a request head. */
function garbage(): Buffer {
  const bytes = Buffer.alloc(64);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 32 + Math.floor(Math.random() * 200);
  return bytes;
}
