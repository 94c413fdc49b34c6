// Failures noticed in seconds, on real Redis with coord processes: a worker
// killed -9 is dropped at its first refused dial (not when its heartbeat goes
// stale), a proxy killed -9 has its leases given back by a live proxy within
// proxyTimeout + heartbeatInterval, an on-demand version whose registry is
// unreachable fails its client with the cause within registryTimeout, and a
// waiting CDP client shows on /status.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import puppeteer from 'puppeteer-core';
import { connect, rawUpgrade, titleOf } from './support/grid.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
/** A loaded shared machine may run a timer this much late. */
const SLACK_MS = 2000;

const active = async (prefix: string) => {
  const flat = (await backend.send(['HGETALL', `${prefix}cluster:active_connections`])) as string[];
  return flat.reduce((n, v, i) => (i % 2 ? n + Number(v) : n), 0);
};

t.test('a worker killed -9: a client 1 s later is served by the other within 2 s, and the dead one leaves the grid for every proxy', async (t) => {
  const prefix = '{kill-worker}:';
  // the default staleThreshold (30 s): the dead worker's heartbeat still looks live throughout
  const sets = ['workers=1', 'heartbeatInterval=1'];
  const port = await freePort();
  const workers = [rig.run('worker', { prefix, sets }), rig.run('worker', { prefix, sets })];
  const proxy = rig.run('proxy', { prefix, sets: [`port=${port}`] });
  const other = rig.run('proxy', { prefix, sets: [`port=${await freePort()}`, 'reaperInProxy=false'] });
  await ready(...workers, proxy, other);
  const refOf = async (p: (typeof workers)[0]) => `chromium:${(await p.waitFor((l) => l.msg === 'browser server registered')).workerId}`;
  const refs = await Promise.all(workers.map(refOf));
  const workerIndex = `${prefix}index:workers:chromium`;
  await until('both workers indexed', async () => ((await backend.send(['ZCARD', workerIndex])) as number) === 2, 30_000);
  // one session first: the worker that served it has the higher lifetime count, so the
  // selection (playwright-distributed's rule) picks it next — the one killed
  const first = await connect(port);
  await titleOf(first, `${page.url}/before-kill`);
  await first.close();
  const lifetimes = (await backend.send(['HMGET', `${prefix}cluster:lifetime_connections`, ...refs])) as string[];
  const doomedAt = lifetimes.findIndex((n) => Number(n) === 1);
  const [doomed, survivor, dead] = [workers[doomedAt]!, workers[1 - doomedAt]!, refs[doomedAt]!];

  doomed.kill('SIGKILL');
  await doomed.exited;
  await new Promise((r) => setTimeout(r, 1000));
  for (const round of [1, 2]) {
    const started = Date.now();
    const browser = await connect(port);
    const ms = Date.now() - started;
    t.ok(ms <= 2000, `client ${round} connected in ${ms} ms`);
    t.equal(await titleOf(browser, `${page.url}/after-kill-${round}`), `coord /after-kill-${round}`, 'served by the surviving worker');
    await browser.close();
  }
  t.ok(proxy.lines.some((l) => l.msg === 'worker refused the connection: removed from the grid; trying another' && l.worker === dead), 'the dead worker was dialled, refused, and removed');
  t.equal(await backend.send(['ZSCORE', workerIndex, dead]), null, 'the dead worker is out of the index, for every proxy');
  t.equal(await backend.send(['HGET', `${prefix}cluster:active_connections`, dead]), null, 'its counters given back');
  await until('sessions given back', async () => (await active(prefix)) === 0, 10_000);
  for (const p of [survivor, proxy, other]) p.kill('SIGTERM');
  t.same(await Promise.all([survivor, proxy, other].map((p) => p.exited)), [0, 0, 0]);
});

t.test('a proxy killed -9 with 3 sessions: a live proxy gives its leases back within proxyTimeout + heartbeatInterval (15 s with the defaults)', async (t) => {
  const prefix = '{kill-proxy}:';
  const port = await freePort();
  const worker = rig.run('worker', { prefix, sets: ['workers=1'] });
  // proxies with every timing default: heartbeatInterval 5 s, proxyTimeout 10 s
  const doomed = rig.run('proxy', { prefix, sets: [`port=${port}`] });
  const live = rig.run('proxy', { prefix, sets: [`port=${await freePort()}`] });
  await ready(worker, doomed, live);
  const browsers = await Promise.all([1, 2, 3].map(() => connect(port)));
  for (const [i, b] of browsers.entries()) await titleOf(b, `${page.url}/held-${i}`);
  t.equal(await active(prefix), 3, 'three sessions counted');
  doomed.kill('SIGKILL');
  await doomed.exited;
  // from its last heartbeat: silent for proxyTimeout, then found at a live proxy's next beat
  const doomedId = (await doomed.waitFor((l) => typeof l.proxyId === 'string')).proxyId as string;
  const lastBeat = Number(await backend.send(['ZSCORE', `${prefix}index:proxies`, doomedId]));
  await until('the leases given back', async () => (await active(prefix)) === 0, 40_000, 100);
  const ms = Date.now() - lastBeat;
  t.ok(ms <= 15_000 + SLACK_MS, `given back ${ms} ms after the dead proxy's last heartbeat (bound 15,000 ms, with ${SLACK_MS} ms for this loaded machine's timers)`);
  t.ok(live.lines.some((l) => l.msg === 'gave back the leases of a proxy that stopped heartbeating' && l.leases === 3), 'by the live proxy, which logged it');
  t.same(await backend.send(['KEYS', `${prefix}leases:*`]), [], 'the dead proxy\'s leases are gone');
  for (const b of browsers) await b.close().catch(() => {});
  for (const p of [worker, live]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, live].map((p) => p.exited)), [0, 0]);
});

t.test('on demand with an unreachable npm registry: the first client gets 503 with the cause within registryTimeout', async (t) => {
  const prefix = '{offline}:';
  const port = await freePort();
  const cache = mkdtempSync(join(tmpdir(), 'coord-pw-offline-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  const closed = await freePort(); // nothing listens there: the registry refuses
  const env = { npm_config_registry: `http://127.0.0.1:${closed}/` };
  const worker = rig.run('worker', { prefix, sets: ['workers=1', 'versionsOnDemand=1.x', `playwrightCache=${cache}`], env });
  const proxy = rig.run('proxy', { prefix, sets: [`port=${port}`, 'versionsOnDemand=1.x'] });
  await ready(worker, proxy);
  const started = Date.now();
  const answer = await rawUpgrade(port, 'Playwright/1.41.0 (offline test)');
  const ms = Date.now() - started;
  t.match(answer, /^HTTP\/1\.1 503 /);
  const message = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.message as string;
  t.match(message, /^Playwright 1\.41 could not be started on demand: cannot install playwright-core@1\.41 from the npm registry: connection refused: request to http:\/\/127\.0\.0\.1:\d+\/playwright-core failed, reason: connect ECONNREFUSED/, message);
  // registryTimeout (5 s) + npm's start-up (NPM_START_MS, 15 s) is the bound; offline it is npm's start-up alone
  t.ok(ms <= 20_000, `answered in ${ms} ms`);
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});

t.test('a CDP client waiting for a browser shows on /status as queued', async (t) => {
  const prefix = '{cdp-queue}:';
  const port = await freePort();
  const worker = rig.run('worker', { prefix, sets: ['workers=1', 'maxConcurrentSessions=1', 'heartbeatInterval=1'] });
  const proxy = rig.run('proxy', { prefix, sets: [`port=${port}`, 'queueTimeout=60', 'maxConcurrentSessions=1'] });
  await ready(worker, proxy);
  const holder = await puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${port}/cdp` });
  const waiting = puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${port}/cdp` });
  const queued = async () => JSON.parse(await (await fetch(`http://127.0.0.1:${port}/status`)).text()).types.chromium.queued as number;
  await until('the second client queued', async () => (await queued()) === 1, 20_000);
  t.pass('/status counts it in queued');
  await holder.close();
  const served = await waiting;
  t.equal(await queued(), 0, 'served once the first left');
  await served.close();
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});
