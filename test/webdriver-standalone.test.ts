// The first promise: `coord run --plugin webdriver` (embedded backend,
// every role in one process) serves http://127.0.0.1:4444, and the two npm
// W3C clients — selenium-webdriver and WebdriverIO 9 (which asks for
// webSocketUrl: true) — each create a headless Chrome session through it,
// open a page served here, read its title and quit.
import t from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { remote } from 'webdriverio';
import { buildIfStale } from './support/build.ts';
import { coord } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { chromeOptions, startPage } from './support/webdriver.ts';

buildIfStale();
const page = await startPage();
const apiPort = await freePort();
const grid = coord(['run', '--plugin', 'webdriver', '--set', `webdriver.api.port=${apiPort}`]);
t.teardown(async () => {
  grid.kill('SIGKILL');
  await page.close();
});
const listening = await grid.waitFor((l) => /^proxy listening on /.test(l.msg), 60_000);
await grid.waitFor((l) => l.msg === 'ready');
const api = async (path: string) => (await fetch(`http://127.0.0.1:${apiPort}${path}`)).json() as Promise<any>;

t.equal(listening.msg, 'proxy listening on http://127.0.0.1:4444', 'the one URL is http://127.0.0.1:4444 by default');
t.match(String(grid.lines.find((l) => l.msg === 'ready')?.redis), /^embedded:/, 'on the embedded backend');
t.same(grid.lines.find((l) => l.msg === 'ready')?.roles, ['webdriver/orchestrator', 'webdriver/manager', 'webdriver/proxy', 'webdriver/api', 'webdriver/gc', 'webdriver/storage'], 'every role in one process');

t.test('selenium-webdriver: session, page, title, quit', async (t) => {
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  const driver = await new webdriver.Builder().usingServer('http://127.0.0.1:4444').forBrowser('chrome').setChromeOptions(options).build();
  const sessionId = (await driver.getSession()).getId();
  await driver.get(`${page.url}/selenium`);
  t.equal(await driver.getTitle(), 'coord /selenium');
  await driver.quit();
  const session = await api(`/api/sessions/${sessionId}`);
  t.equal(session.state, 'terminated', 'quit ends the session');
  const codes: string[] = session.log.map((e: { code: string }) => e.code);
  // PENDING (manager) and the node's first entries are written concurrently: their relative order varies
  t.same(codes.slice(0, 3), ['QUEUED', 'NALLOC', 'SCHED'], 'queued, allocated, scheduled');
  t.same(codes.filter((c) => ['BOOT', 'DSTART', 'DALIVE', 'LSINIT'].includes(c)), ['BOOT', 'DSTART', 'DALIVE', 'LSINIT'], 'the node booted its driver and the local session');
  t.ok(codes.includes('PENDING'));
  t.same(codes.slice(-3), ['NALIVE', 'CLOSED', 'HALT'], 'served, closed by the client, halted');
  t.equal(codes.length, 11, 'and nothing else');
});

t.test('WebdriverIO 9 (webSocketUrl: true): session, page, title, quit', async (t) => {
  const browser = await remote({
    hostname: '127.0.0.1',
    port: 4444,
    path: '/',
    logLevel: 'silent',
    capabilities: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions },
  });
  const sessionId = browser.sessionId;
  t.match(String(browser.capabilities.webSocketUrl), `ws://127.0.0.1:4444/session/${sessionId}/se/bidi`, 'BiDi goes through the grid too');
  await browser.url(`${page.url}/wdio`);
  t.equal(await browser.getTitle(), 'coord /wdio');
  await browser.deleteSession();
  const session = await api(`/api/sessions/${sessionId}`);
  t.equal(session.capabilities.requested.alwaysMatch.webSocketUrl, true, 'the client asked for webSocketUrl: true');
  t.equal(session.state, 'terminated');
  t.equal(session.log.at(-2).code, 'CLOSED');
});

t.test('the slots are free again and Ctrl-C exits 0', async (t) => {
  const status = (await (await fetch('http://127.0.0.1:4444/status')).json()) as { value: { ready: boolean; slots: { total: number; available: number } } };
  t.equal(status.value.ready, true, 'GET /status: ready');
  t.same(status.value.slots, { total: 2, available: 2 }, 'both slots back');
  grid.kill('SIGINT');
  t.equal(await grid.exited, 0);
});
