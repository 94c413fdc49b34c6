// DevTools-protocol clients through the grid: puppeteer-core (no browser
// download) and Playwright's connectOverCDP on ws://HOST:PORT/cdp, with the
// same token, admission and limits as Playwright sessions; each client has a
// browser of its own (neither pages nor cookies are shared).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import t from 'tap';
import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';
import { root } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

// the grid's own temp folder, so the profile check sees only its browsers
const temp = mkdtempSync(join(tmpdir(), 'coord-cdp-test-'));
const profiles = () => readdirSync(temp).filter((name) => name.startsWith('coord-cdp-'));
const rig = await startPageRig(t, 'browser-grid');
const { backend, page } = rig;
rig.atEnd(() => rmSync(temp, { recursive: true, force: true }));

const prefix = '{cdp}:';
const token = 'cdp-secret';
// generous heartbeat slack: a loaded machine must not make the worker look stale
const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'shutdownCommandTtl=5', 'drainTimeout=5',
  'maxConcurrentSessions=2', 'queueTimeout=3', `token=${token}`];
const run = (role: string, extra: string[]) => rig.run(role, { prefix, sets: [...sets, ...extra], env: { TMPDIR: temp } });
const port = await freePort();
const worker = run('worker', ['workers=1']);
const proxy = run('proxy', [`port=${port}`]);
await ready(worker, proxy);
const cdpUrl = `ws://127.0.0.1:${port}/cdp?token=${token}`;
const active = async () => {
  const flat = (await backend.send(['HGETALL', `${prefix}cluster:active_connections`])) as string[];
  return flat.reduce((n, v, i) => (i % 2 ? n + Number(v) : n), 0);
};

t.test('puppeteer-core and connectOverCDP each run a page through the proxy', async (t) => {
  const p = await puppeteer.connect({ browserWSEndpoint: cdpUrl });
  const tab = await p.newPage();
  await tab.goto(`${page.url}/puppeteer`);
  t.equal(await tab.title(), 'coord /puppeteer', 'puppeteer');
  await p.close(); // its browser is its own: closing it is fine
  await until('session given back', async () => (await active()) === 0, 10_000);

  const pw = await chromium.connectOverCDP(cdpUrl);
  const context = pw.contexts()[0] ?? (await pw.newContext());
  const other = await context.newPage();
  await other.goto(`${page.url}/overcdp`);
  t.equal(await other.title(), 'coord /overcdp', 'connectOverCDP');
  await pw.close();
  await until('session given back', async () => (await active()) === 0, 10_000);
  await t.rejects(puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${port}/cdp` }), /401/, 'the token is required on /cdp too');
});

t.test('two CDP clients at once see neither the other\'s pages nor its cookies; both count against maxConcurrentSessions', async (t) => {
  const a = await puppeteer.connect({ browserWSEndpoint: cdpUrl });
  const b = await puppeteer.connect({ browserWSEndpoint: cdpUrl });
  const pageA = await a.newPage();
  await pageA.goto(`${page.url}/secret-a`);
  await pageA.evaluate(() => (document.cookie = 'owner=a; max-age=3600'));
  const pageB = await b.newPage();
  await pageB.goto(`${page.url}/b`);
  t.same((await pageB.cookies()).map((c) => c.name), [], 'b does not see a\'s cookie');
  t.notOk((await b.pages()).some((p) => p.url().includes('secret-a')), 'b does not see a\'s page');
  t.notOk((await b.targets()).some((x) => x.url().includes('secret-a')), 'nor its target');
  t.same((await pageA.cookies()).map((c) => c.name), ['owner'], 'a keeps its own');
  t.equal(await active(), 2, 'two sessions counted');
  await t.rejects(puppeteer.connect({ browserWSEndpoint: cdpUrl }), /503/, 'a third waits, then 503: the worker is full');
  await t.rejects(chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium&token=${token}`, { timeout: 10_000 }), /503/, 'Playwright clients share the same slots');
  await a.close();
  await until('a\'s session given back', async () => (await active()) === 1, 10_000);
  await b.close();
  await until('b\'s session given back', async () => (await active()) === 0, 10_000);
});

t.test('clients that close their browser one after another are each served (a closed browser never takes the worker down)', async (t) => {
  // Chromium's helpers may still write into the profile after the browser exits; removing
  // it once crashed the worker with ENOTEMPTY, and every later client got 503.
  for (let i = 0; i < 8; i++) {
    const b = await puppeteer.connect({ browserWSEndpoint: cdpUrl });
    const tab = await b.newPage();
    await tab.goto(`${page.url}/round-${i}`);
    t.equal(await tab.title(), `coord /round-${i}`, `client ${i + 1} served`);
    await b.close();
  }
  t.equal(worker.child.exitCode, null, `the worker is still running${worker.stderr() ? `; its stderr: ${worker.stderr().slice(-300)}` : ''}`);
});

t.test('a killed CDP client gives its session back', async (t) => {
  const child = spawn(process.execPath, ['--input-type=module', '-e',
    `import p from 'puppeteer-core'; const b = await p.connect({ browserWSEndpoint: ${JSON.stringify(cdpUrl)} }); await b.newPage(); console.log('connected'); setInterval(() => {}, 1000);`],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('connected') && resolve()));
  t.equal(await active(), 1, 'counted while it runs');
  child.kill('SIGKILL');
  await until('given back after the kill', async () => (await active()) === 0, 10_000);
  t.pass('its session is given back');
});

/** The proxy's count of CDP sessions that took `path` (direct: to the browser itself; worker: through its CDP port). */
async function cdpSessions(proxyPort: number, path: 'direct' | 'worker'): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${proxyPort}/metrics?token=${token}`)).text();
  return Number(new RegExp(`^coord_grid_cdp_sessions_total\\{path="${path}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}
/** Chromium browser processes (not their helpers) the worker launched for CDP clients. */
function cdpBrowsers(): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return args.includes(`--remote-debugging-address=127.0.0.1`) && args.some((a) => a.startsWith(`--user-data-dir=${temp}/coord-cdp-`)) && !args.some((a) => a.startsWith('--type='));
    } catch {
      return false; // gone meanwhile
    }
  });
}

t.test('a worker on the proxy\'s host: the client is connected straight to its browser, and the worker relays otherwise (cdpDirect=false)', async (t) => {
  t.ok((await cdpSessions(port, 'direct')) > 0, 'the sessions so far went straight to their browsers');
  t.equal(await cdpSessions(port, 'worker'), 0, 'none through the worker');

  const relayPort = await freePort();
  const relaying = run('proxy', [`port=${relayPort}`, 'cdpDirect=false', 'reaperInProxy=false']);
  await ready(relaying);
  // a client asking for a lease itself is not given one: the header is the proxy's
  const b = await puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${relayPort}/cdp?token=${token}`, headers: { 'X-Coord-Cdp-Lease': '1' } });
  const tab = await b.newPage();
  await tab.goto(`${page.url}/relayed`);
  t.equal(await tab.title(), 'coord /relayed', 'a page through the worker\'s CDP port');
  t.equal(await cdpSessions(relayPort, 'worker'), 1, 'counted as relayed by the worker');
  t.equal(await cdpSessions(relayPort, 'direct'), 0);
  await b.close();
  await until('session given back', async () => (await active()) === 0, 10_000);
  relaying.kill('SIGTERM');
  t.equal(await relaying.exited, 0);
});

t.test('a proxy killed -9 during a direct session: the worker kills the client\'s browser (its lease closed) and the client is disconnected', async (t) => {
  const doomedPort = await freePort();
  const doomed = run('proxy', [`port=${doomedPort}`, 'reaperInProxy=false']);
  await ready(doomed);
  const b = await puppeteer.connect({ browserWSEndpoint: `ws://127.0.0.1:${doomedPort}/cdp?token=${token}` });
  await (await b.newPage()).goto(`${page.url}/leased`);
  t.equal(await cdpSessions(doomedPort, 'direct'), 1, 'a direct session');
  const before = cdpBrowsers();
  const disconnected = new Promise<void>((resolve) => b.once('disconnected', () => resolve()));
  doomed.kill('SIGKILL');
  await doomed.exited;
  await disconnected;
  t.pass('the client was disconnected');
  // before the kill: the client's browser and the warm spare (which stays; a new spare may join it)
  await until('its browser killed', () => before.some((pid) => !cdpBrowsers().includes(pid)), 10_000);
  t.pass(`of the browsers before the kill (${before.join(', ')}), one exited`);
});

t.test('the grid stops cleanly', async (t) => {
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
  t.same(profiles(), [], 'no CDP browser profile is left in the temp folder');
});
