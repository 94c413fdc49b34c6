// The grid page in real headless Chromium, on a grid with a token: refused
// without it; opened as /?token=… it lands on /ui and shows the orchestrator
// and its slots. A selenium-webdriver session made through the grid appears
// live (alive, in its slot, with its capabilities and timings), a client
// waiting for a slot shows in the queue until it is served, and quitting
// ends the session on the page and frees its slot. Screenshots go to test/.probe/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chromium, type Page } from 'playwright-core';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { launchOptions } from './support/chromium.ts';
import { root } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { chromeOptions, gridId, newSessionBody, startPage, startWebdriver, w3c } from './support/webdriver.ts';

const shots = join(root, 'test/.probe');
mkdirSync(shots, { recursive: true });
const TOKEN = 'ui-token-1';
const port = await freePort();
const grid = await startWebdriver({ redis: 'embedded://ui', options: { proxy: { port, token: TOKEN }, api: { port: 0 }, orchestrator: { slots: 2, id: 'orch-ui' } } });
const site = await startPage();
const browser = await chromium.launch(launchOptions);
t.teardown(async () => {
  await browser.close();
  await grid.handle.stop('test done');
  await site.close();
});
const base = `http://127.0.0.1:${port}`;
const bearer = { authorization: `Bearer ${TOKEN}` };
const WAIT = { timeout: 30_000 };

t.test('without the token the page is refused, and says what to send', async (t) => {
  const page = await browser.newPage();
  t.teardown(() => page.close());
  for (const path of ['/ui', '/', '/ui?token=wrong']) {
    const res = await page.goto(`${base}${path}`);
    t.equal(res?.status(), 401, `${path}: 401`);
    t.match(await page.textContent('body'), /unauthorized.*missing or wrong token/, `${path}: the W3C error`);
  }
});

let page: Page;

t.test('/?token=… redirects to /ui, which shows the orchestrator with two free slots', async (t) => {
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${base}/?token=${TOKEN}`);
  t.equal(new URL(page.url()).pathname, '/ui', 'redirected to /ui');
  t.equal(new URL(page.url()).searchParams.get('token'), TOKEN, 'the token kept');
  const node = page.getByTestId('node-orch-ui');
  await node.waitFor(WAIT);
  t.equal(await node.getAttribute('data-status'), 'UP');
  await page.locator('[data-testid=slot-orch-ui\\:1][data-busy=false]').waitFor(WAIT);
  await page.locator('[data-testid=slot-orch-ui\\:2][data-busy=false]').waitFor(WAIT);
  t.match(await page.getByTestId('slots').textContent(), /0 busy of 2/);
  t.equal(await page.getByTestId('error').textContent(), '', 'no error shown');
});

t.test('a selenium-webdriver session appears live, a waiting client shows in the queue, and both end live', async (t) => {
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  // selenium-webdriver sends the URL's credentials as Basic auth: the token is the password
  const driver = await new webdriver.Builder().usingServer(`http://ci:${TOKEN}@127.0.0.1:${port}`).forBrowser('chrome').setChromeOptions(options).build();
  const id = gridId((await driver.getSession()).getId());
  await driver.get(`${site.url}/ui-test`);
  t.equal(await driver.getTitle(), 'coord /ui-test');

  const row = page.getByTestId(`session-${id}`);
  await page.locator(`[data-testid="session-${id}"][data-state=alive]`).waitFor(WAIT);
  t.pass('the session shows as alive');
  t.match(await row.textContent(), /chrome \d+\./, 'with its browser');
  t.match(await row.textContent(), /orch-ui \/ orch-ui:\d/, 'its orchestrator and slot');
  t.match(await row.textContent(), /NALIVE|LSINIT/, 'the last code of its log');
  const cells = await row.locator('td.num').allTextContents();
  t.ok(cells.slice(0, 3).every((c) => /^\d+\.\d$/.test(c)), `timings in seconds: ${cells.join(', ')}`);
  t.match(await row.locator('pre').textContent(), /"browserName": "chrome"/, 'its capabilities');
  await page.locator(`[data-session="${id}"][data-busy=true]`).waitFor(WAIT);
  t.pass('its slot shows it');

  // fill the second slot, then one more client waits in the queue
  const second = await w3c(base, 'POST', '/session', newSessionBody(), bearer);
  t.equal(second.status, 200);
  const waiting = w3c(base, 'POST', '/session', newSessionBody(), bearer);
  await page.locator('[data-testid=queue] tr').first().waitFor(WAIT);
  t.match(await page.getByTestId('queue-size').textContent(), /queue: 1/);
  t.match(await page.locator('[data-testid=queue] tr').first().textContent(), /"browserName": "chrome"/, 'the queued request with its capabilities');
  t.match(await page.getByTestId('slots').textContent(), /2 busy of 2/);
  await page.screenshot({ path: join(shots, 'webdriver-ui-busy.png'), fullPage: true });

  t.equal((await w3c(base, 'DELETE', `/session/${second.body.value!.sessionId}`, undefined, bearer)).status, 200);
  const served = await waiting;
  t.equal(served.status, 200, 'the waiting client is served once a slot is free');
  const third = served.body.value!.sessionId!;
  await page.locator(`[data-testid="session-${third}"][data-state=alive]`).waitFor(WAIT);
  await page.locator('[data-testid=queue] tr').waitFor({ state: 'detached', ...WAIT });
  t.match(await page.getByTestId('queue-size').textContent(), /queue: 0/, 'the queue empties live');
  await page.locator(`[data-testid="session-${second.body.value!.sessionId}"][data-state=terminated]`).waitFor(WAIT);
  t.pass('the quit session shows as terminated');

  await driver.quit();
  await page.locator(`[data-testid="session-${id}"][data-state=terminated]`).waitFor(WAIT);
  t.match(await row.textContent(), /CLOSED|HALT/, 'ended by the client');
  await page.locator(`[data-session="${id}"]`).waitFor({ state: 'detached', ...WAIT });
  t.pass('its slot no longer shows it');
  t.equal((await w3c(base, 'DELETE', `/session/${third}`, undefined, bearer)).status, 200);
  await page.locator('[data-testid=slot-orch-ui\\:1][data-busy=false]').waitFor(WAIT);
  await page.locator('[data-testid=slot-orch-ui\\:2][data-busy=false]').waitFor(WAIT);
  await page.screenshot({ path: join(shots, 'webdriver-ui-idle.png'), fullPage: true });
  t.equal(await page.getByTestId('error').textContent(), '', 'no error shown at any point at the end');

  // an ended row no longer changes: the refresh keeps its element, so a click or an opened <details> survives it
  await row.locator('details').last().locator('summary').click();
  await row.evaluate((tr) => ((tr as unknown as { marked: boolean }).marked = true));
  const updated = await page.getByTestId('updated').textContent();
  await page.waitForFunction((before) => document.querySelector('[data-testid=updated]')?.textContent !== before, updated, WAIT);
  await page.waitForFunction((before) => document.querySelector('[data-testid=updated]')?.textContent !== before, await page.getByTestId('updated').textContent(), WAIT);
  t.equal(await row.evaluate((tr) => (tr as unknown as { marked?: boolean }).marked === true), true, 'two refreshes later the row is the same element');
  t.equal(await row.locator('details').last().evaluate((d) => (d as HTMLDetailsElement).open), true, 'and its opened capabilities stay open');
});
