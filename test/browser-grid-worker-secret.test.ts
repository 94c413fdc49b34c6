// A worker's ports cannot be used to walk around the grid's token: its CDP port
// serves only its secret path (in its Redis record, never in its log or on
// /status), as its Playwright browser server serves only Playwright's random
// path. A worker and a proxy run in their own processes, with real Chromium.
import t from 'tap';
import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';
import { rawUpgrade } from './support/grid.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';

const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
const prefix = '{secret}:';
const token = 'grid-token';
const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'shutdownCommandTtl=5', 'drainTimeout=5', `token=${token}`];
const port = await freePort();
// bound to every interface, as a worker host serving other machines is
const worker = rig.run('worker', { prefix, sets: [...sets, 'workers=1', 'workerHost=0.0.0.0', 'advertiseHost=127.0.0.1'] });
const proxy = rig.run('proxy', { prefix, sets: [...sets, `port=${port}`] });
await ready(worker, proxy);
const [key] = (await backend.send(['KEYS', `${prefix}worker:chromium:*`])) as string[];
const [wsEndpoint, cdpEndpoint] = (await backend.send(['HMGET', key!, 'wsEndpoint', 'cdpEndpoint'])) as string[];
const browserServer = new URL(wsEndpoint!);
const cdpFront = new URL(cdpEndpoint!);
const secrets = [browserServer.pathname, cdpFront.pathname];

t.test('the worker record carries each endpoint with a secret path; its log and /status do not', async (t) => {
  for (const path of secrets) t.match(path, /^\/[0-9a-f]{32}$/, `a 128-bit path: ${path.slice(0, 5)}…`);
  const logged = JSON.stringify(worker.lines);
  t.match(logged, /browser server registered/);
  for (const path of secrets) t.notOk(logged.includes(path.slice(1)), 'the secret is not in the worker\'s log');
  const status = await (await fetch(`http://127.0.0.1:${port}/status?token=${token}`)).text();
  t.match(status, `127.0.0.1:${browserServer.port}`, '/status shows the worker\'s address');
  for (const path of secrets) t.notOk(status.includes(path.slice(1)), 'but not its secret');
});

t.test('the CDP port without its secret path: 403, no browser, no lease', async (t) => {
  const cdpPort = Number(cdpFront.port);
  t.match(await rawUpgrade(cdpPort, 'raw'), /^HTTP\/1\.1 403 /, 'a raw upgrade on / is refused');
  t.match(await rawUpgrade(cdpPort, 'raw', { path: '/devtools/browser/x' }), /^HTTP\/1\.1 403 /, 'and on a guessed DevTools path');
  const lease = await rawUpgrade(cdpPort, 'raw', { headers: ['X-Coord-Cdp-Lease: 1'], path: '/' });
  t.match(lease, /^HTTP\/1\.1 403 /, 'a lease asked for without the secret is refused');
  t.notMatch(lease, /X-Coord-Cdp-Browser/i, 'and names no browser');
  await t.rejects(puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${cdpPort}/`, protocolTimeout: 10_000 }), /403/, 'puppeteer-core dialled straight to the advertised port is refused');
});

t.test("the Playwright browser server without Playwright's path is refused", async (t) => {
  const serverPort = Number(browserServer.port);
  t.match(await rawUpgrade(serverPort, 'raw'), /^HTTP\/1\.1 4\d\d /, 'a raw upgrade on / is refused');
  await t.rejects(chromium.connect(`ws://127.0.0.1:${serverPort}/`, { timeout: 10_000 }), /400|Bad Request/, 'chromium.connect straight to the port is refused');
});

t.test('through the proxy with the token, both protocols are served; without it, 401', async (t) => {
  const cdp = await puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${port}/cdp?token=${token}` });
  const tab = await cdp.newPage();
  await tab.goto(`${page.url}/cdp`);
  t.equal(await tab.title(), 'coord /cdp', 'puppeteer-core over /cdp');
  await cdp.close();
  const pw = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium&token=${token}`, { timeout: 60_000 });
  const p = await pw.newPage();
  await p.goto(`${page.url}/pw`);
  t.equal(await p.title(), 'coord /pw', 'Playwright over /');
  await pw.close();
  await t.rejects(puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${port}/cdp` }), /401/, 'no token on /cdp: 401');
  await t.rejects(chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 10_000 }), /401/, 'no token on /: 401');
});

t.test('the grid stops cleanly', async (t) => {
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});
