// Version-aware routing with real Chromium and two playwright-core versions:
// coord's worker speaks the bundled one, a playwright-distributed stand-in an
// older minor installed from npm. Each client must reach a server of its own
// major.minor; a version nobody serves is told so at once; a worker that
// refuses a session (428) is skipped.
import t from 'tap';
import { chromium } from 'playwright-core';
import { clientsInBatches, rawUpgrade } from './support/grid.ts';
import { startPdWorker, type PdWorker } from './support/pd-worker.ts';
import { playwrightCore } from './support/playwright-versions.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const older = playwrightCore('1.62');
const bundled = (await import('playwright-core/package.json', { with: { type: 'json' } })).default.version;
const mm = (v: string) => v.split('.').slice(0, 2).join('.');

const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
const pds: PdWorker[] = [];
rig.atEnd(() => Promise.all(pds.map((w) => w.stop().catch(() => {}))));

const prefix = '{ver}:';
// Heartbeats every second, but staleness and key expiry well above it: the playwright-distributed
// stand-in beats from this test's own process, which is busy driving 8 clients at a time; a beat
// 3 s late there once made its worker stale mid-run and its version unserved (428) on a loaded CI.
const sets = ['heartbeatInterval=1', 'redisKeyTtl=15', 'staleThreshold=12', 'reaperRunInterval=15', 'shutdownCommandTtl=5', 'drainTimeout=5', 'queueTimeout=30'];
const pdTtl = 15;
const run = (role: string, extra: string[]) => rig.run(role, { prefix, sets: [...sets, ...extra] });
const lifetime = async (ref: string) => Number(await backend.send(['HGET', `${prefix}cluster:lifetime_connections`, ref]));

const port = await freePort();
const worker = run('worker', ['workers=1']);
const proxy = run('proxy', [`port=${port}`]);
await ready(worker, proxy);
const coordRef = `chromium:${String((await worker.waitFor((l) => l.msg === 'browser server registered')).workerId)}`;
const pd = await startPdWorker({ backend, prefix, playwright: older.playwright, ttlSeconds: pdTtl });
pds.push(pd);

t.test(`clients of ${mm(older.version)} and ${mm(bundled)}, alternating, 8 at a time: each served by a server of its version`, async (t) => {
  t.not(mm(older.version), mm(bundled), 'two different minors');
  await until('the playwright-distributed worker adopted with the version its server reported', async () => (await backend.send(['HGET', pd.key, 'version'])) === mm(older.version), 15_000);
  const versions = [older.playwright.chromium, chromium];
  const failures = await clientsInBatches(port, versions, 5, page.url, 'c');
  t.same(failures, [], '40 clients, 0 failures');
  t.equal(await lifetime(pd.ref), 20, `the ${mm(older.version)} server ran the 20 ${mm(older.version)} clients`);
  t.equal(await lifetime(coordRef), 20, `coord's ${mm(bundled)} server ran the 20 ${mm(bundled)} clients`);
});

t.test('a client of a version no worker speaks is told so at once, with the versions served', async (t) => {
  const started = Date.now();
  const answer = await rawUpgrade(port, 'Playwright/1.50.0 (x64; debian 12) node/20.0');
  const took = Date.now() - started;
  t.match(answer, /^HTTP\/1\.1 428 /, '428');
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  t.equal(body.error.clientVersion, '1.50');
  t.same(body.error.versions, [mm(older.version), mm(bundled)].sort());
  t.match(body.error.message, new RegExp(`Playwright 1\\.50 is not served by this grid: its chromium workers speak Playwright ${[mm(older.version), mm(bundled)].sort().join(', ')}`));
  t.ok(took < 5000, `answered in ${took} ms, not after the queue timeout (30 s)`);
  await t.rejects(
    older.playwright.chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { headers: { 'User-Agent': 'Playwright/1.50.0' }, timeout: 5000 }),
    /428[\s\S]*not served by this grid/,
    "Playwright's own error shows the answer",
  );
});

t.test('a worker answering 428 is given back unpenalised, relabelled, and the client served by another', async (t) => {
  // a playwright-distributed worker whose hash claims the bundled version, while its server speaks the older one
  const liar = await startPdWorker({ backend, prefix, playwright: older.playwright, extra: { version: bundled }, ttlSeconds: pdTtl });
  pds.push(liar);
  await until('adopted under the version it claims', async () => (await backend.send(['ZSCORE', `${prefix}index:workers:chromium`, liar.ref])) !== null, 15_000);
  // make it the selector's first choice: the highest lifetime below maxLifetime − margin (50 − 16)
  await backend.send(['HSET', `${prefix}cluster:lifetime_connections`, liar.ref, 30]);
  const band = Math.floor(Number(await backend.send(['ZSCORE', `${prefix}index:free:chromium`, liar.ref])) / 1_000_000) * 1_000_000;
  t.equal(band, (Number(bundled.split('.')[0]) * 1000 + Number(bundled.split('.')[1])) * 1_000_000, `filed in the ${mm(bundled)} band`);
  await backend.send(['ZADD', `${prefix}index:free:chromium`, band + 30, liar.ref]);
  const before = await lifetime(coordRef);
  const b = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 30_000 });
  const p = await b.newPage();
  await p.goto(page.url);
  t.match(await p.title(), /coord/, 'served');
  await b.close();
  t.ok(proxy.lines.some((l) => l.msg === 'worker refused the session; trying another' && l.worker === liar.ref && l.status === 428), 'the liar was tried and refused');
  t.equal(await lifetime(coordRef), before + 1, "served by coord's worker");
  t.equal(await lifetime(liar.ref), 30, 'the refusal was rolled back: no lifetime used');
  t.equal(await backend.send(['HGET', liar.key, 'version']), mm(older.version), 'relabelled with the version its server reported');
  const again = await older.playwright.chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 30_000 });
  await again.close();
  t.pass(`and it now serves ${mm(older.version)} clients`);
});
