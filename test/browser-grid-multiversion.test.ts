// One worker process serving several Playwright versions, with real Chromium
// and real clients: playwrightVersions lists the bundled playwright-core and
// 1.62 (found in the cache folder, no network), and versionsOnDemand lets a
// client of 1.64 make the worker install playwright-core 1.64 from the npm
// registry and start servers of it while the client waits.
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { chromium } from 'playwright-core';
import { root } from './support/cli.ts';
import { clientsInBatches, rawUpgrade } from './support/grid.ts';
import { playwrightCore } from './support/playwright-versions.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';

const mm = (v: string) => v.split('.').slice(0, 2).join('.');
const bundled = mm((await import('playwright-core/package.json', { with: { type: 'json' } })).default.version);
const older = playwrightCore('1.62');
const onDemand = playwrightCore('1.64'); // the client; the worker installs its own copy

// the worker's cache: 1.62 already there (as an offline machine would have it), 1.64 not
const cache = mkdtempSync(join(tmpdir(), 'coord-pw-cache-'));
symlinkSync(join(root, 'test/.probe/pw-1.62'), join(cache, 'pw-1.62'));

const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
rig.atEnd(() => rmSync(cache, { recursive: true, force: true }));

const prefix = '{mv}:';
const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'shutdownCommandTtl=5', 'drainTimeout=5', 'queueTimeout=90', 'cdp=false'];
const run = (role: string, extra: string[]) => rig.run(role, { prefix, sets: [...sets, ...extra] });

/** A raw upgrade announcing a Playwright version; resolves to the whole answer. */
const upgrade = (port: number, version: string) => rawUpgrade(port, `Playwright/${version} (x64; debian 12) node/20.0`);
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: number; message: string } };

const port = await freePort();
// the worker allows 1.63–1.64 on demand (and versions npm does not have, to see a failed start); the proxy any 1.x
const worker = run('worker', ['workers=1', `playwrightVersions=${bundled},1.62`, `playwrightCache=${cache}`, 'versionsOnDemand=>=1.63 <1.65 || 1.99']);
const proxy = run('proxy', [`port=${port}`, 'versionsOnDemand=1.x']);
await ready(worker, proxy);
const refOf = async (version: string) => {
  const line = await worker.waitFor((l) => l.msg === 'browser server registered' && mm(String(l.version)) === version, 60_000);
  return `chromium:${String(line.workerId)}`;
};
const lifetime = async (ref: string) => Number(await backend.send(['HGET', `${prefix}cluster:lifetime_connections`, ref]));

t.test('one worker process with playwrightVersions of two versions registers both; clients of each are served by a server of their version', async (t) => {
  const [refNew, refOld] = [await refOf(bundled), await refOf('1.62')];
  t.ok(worker.lines.some((l) => l.msg === 'playwright-core found' && mm(String(l.version)) === '1.62' && l.source === 'cache'), '1.62 taken from the cache, no install');
  const served = (await backend.send(['HKEYS', `${prefix}index:versions:chromium`])) as string[];
  t.same(served.sort(), ['1.62', bundled].sort(), 'the grid serves both versions');
  const clients = [older.playwright.chromium, chromium];
  const failures = await clientsInBatches(port, clients, 2, page.url, 'v');
  t.same(failures, [], '16 clients, 0 failures');
  t.equal(await lifetime(refOld), 8, 'the 1.62 server ran the 8 clients of 1.62');
  t.equal(await lifetime(refNew), 8, `the ${bundled} server ran the 8 clients of ${bundled}`);
});

t.test('versionsOnDemand: a client of 1.64 waits while the worker installs playwright-core 1.64 and starts a server of it, then is served', async (t) => {
  t.notOk(existsSync(join(cache, 'pw-1.64')), 'not in the cache before');
  const b = await onDemand.playwright.chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 90_000 });
  const p = await b.newPage();
  await p.goto(`${page.url}/on-demand`);
  t.equal(await p.title(), 'coord /on-demand', 'served');
  await b.close();
  const started = worker.lines.find((l) => l.msg === 'browser servers started on demand');
  t.equal(mm(String(started?.version)), '1.64', 'started on demand');
  t.equal(started?.source, 'installed', 'installed from the npm registry');
  t.ok(existsSync(join(cache, 'pw-1.64/node_modules/playwright-core/package.json')), 'into the cache folder');
  t.equal(await lifetime(await refOf('1.64')), 1, 'by the 1.64 server');
  t.equal(await backend.send(['EXISTS', `${prefix}versions:claim:chromium:1.64`]), 0, 'the claim is given back');
  // a second client of 1.64 is served at once by the server now running
  const again = await onDemand.playwright.chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 30_000 });
  await again.close();
  t.equal(worker.lines.filter((l) => l.msg === 'browser servers started on demand').length, 1, 'started once');
});

t.test('a version no worker process allows: 428 naming the versions served, after the short wait for a claim', async (t) => {
  const started = Date.now();
  const answer = await upgrade(port, '1.50.0');
  t.match(answer, /^HTTP\/1\.1 428 /);
  t.match(bodyOf(answer).error.message, /Playwright 1\.50 is not served by this grid: its chromium workers speak Playwright 1\.62, .*none allows 1\.50 in browser-grid\.versionsOnDemand/);
  t.ok(Date.now() - started < 15_000, `answered in ${Date.now() - started} ms`);
  t.notOk(worker.lines.some((l) => l.msg === 'starting browser servers of a Playwright version on demand' && l.version === '1.50'), 'the worker did not try');
});

t.test('a version that cannot be installed: 503 with the reason, not a wait until the queue timeout', async (t) => {
  const started = Date.now();
  const answer = await upgrade(port, '1.99.0');
  t.match(answer, /^HTTP\/1\.1 503 /);
  t.match(bodyOf(answer).error.message, /^Playwright 1\.99 could not be started on demand: cannot install playwright-core@1\.99 from the npm registry/);
  t.ok(Date.now() - started < 60_000, `answered in ${Date.now() - started} ms`);
  t.notOk(existsSync(join(cache, 'pw-1.99')), 'nothing left in the cache');
});

t.test('bad version settings are one clear line each', async (t) => {
  const { coordSync } = await import('./support/cli.ts');
  const range = coordSync(['run', '--plugin', 'browser-grid', '--set', 'browser-grid.versionsOnDemand=not a range']);
  t.equal(range.status, 2);
  t.equal(range.stderr.trim(), 'coord: config: browser-grid.versionsOnDemand "not a range": expected a semver range such as ">=1.50 <2", or a list of major.minor versions');
  const r = coordSync(['run', '--plugin', 'browser-grid', '--set', 'browser-grid.playwrightVersions=1.62,latest']);
  t.equal(r.status, 2);
  t.match(r.stderr, /browser-grid\.playwrightVersions\[1\] = "latest" .*expected string matching/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
