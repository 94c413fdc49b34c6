// Many machines without a footgun: a worker bound to every interface with no
// advertiseHost registers an address other hosts can dial (never 0.0.0.0),
// and a wildcard advertiseHost is refused; a clean stop on Redis leaves no
// key of the grid's behind and logs no "Redis unreachable".
import { networkInterfaces } from 'node:os';
import t from 'tap';
import puppeteer from 'puppeteer-core';
import { coordSync } from './support/cli.ts';
import { connect, startGrid, titleOf } from './support/grid.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';

const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
const timing = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'shutdownCommandTtl=5', 'drainTimeout=5'];
/** This machine's first non-loopback IPv4 address, what the worker should pick. */
const own = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

t.test('a worker bound to 0.0.0.0 with no advertiseHost registers a dialable address, logs it, and is served', async (t) => {
  const prefix = '{wild}:';
  const port = await freePort();
  const worker = rig.run('worker', { prefix, sets: [...timing, 'workers=1', 'workerHost=0.0.0.0'] });
  const proxy = rig.run('proxy', { prefix, sets: [...timing, `port=${port}`] });
  await ready(worker, proxy);
  const [key] = (await backend.send(['KEYS', `${prefix}worker:chromium:*`])) as string[];
  const endpoints = (await backend.send(['HMGET', key!, 'wsEndpoint', 'endpoint', 'cdpEndpoint'])) as string[];
  for (const endpoint of endpoints) {
    const host = new URL(endpoint).hostname;
    t.not(host, '0.0.0.0', `no wildcard registered (${host})`);
    if (own) t.equal(host, own, 'the first non-loopback IPv4 address');
  }
  const chosen = await worker.waitFor((l) => /advertising this host's own address/.test(l.msg));
  t.equal(chosen.advertiseHost, new URL(endpoints[0]!).hostname, 'the choice is logged');
  const browser = await connect(port);
  t.equal(await titleOf(browser, `${page.url}/wild`), 'coord /wild', 'a Playwright client is served through the proxy');
  await browser.close();
  const cdp = await puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${port}/cdp` });
  const tab = await cdp.newPage();
  await tab.goto(`${page.url}/wild-cdp`);
  t.equal(await tab.title(), 'coord /wild-cdp', 'and a CDP client');
  await cdp.close();
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});

t.test('a wildcard advertiseHost: one clear line, exit 2, nothing started', async (t) => {
  const r = coordSync(['run', '--plugin', 'browser-grid', '--set', 'browser-grid.workerHost=0.0.0.0', '--set', 'browser-grid.advertiseHost=0.0.0.0']);
  t.equal(r.status, 2);
  t.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.match(r.stderr, /advertiseHost "0\.0\.0\.0" is a wildcard address/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

t.test('a clean stop on Redis leaves no key of the grid and logs no "Redis unreachable"', async (t) => {
  const prefix = '{clean}:';
  const port = await freePort();
  const grid = await startGrid({
    redis: rig.redis.url,
    prefix,
    roles: ['proxy', 'worker'],
    options: { port, workers: 1, heartbeatInterval: 1, redisKeyTtl: 20, staleThreshold: 15, reaperRunInterval: 30, shutdownCommandTtl: 5, drainTimeout: 5 },
  });
  const browser = await connect(port);
  t.equal(await titleOf(browser, `${page.url}/clean`), 'coord /clean');
  await browser.close();
  t.ok(((await backend.send(['KEYS', `${prefix}index:versions:*`])) as string[]).length > 0, 'the versions index was written while it ran');
  await grid.handle.stop('test done');
  t.same(await backend.send(['KEYS', `${prefix}*`]), [], 'no key left');
  t.same(grid.logs.filter((l) => /Redis unreachable/i.test(String(l.msg))), [], 'no "Redis unreachable" warning');
});
