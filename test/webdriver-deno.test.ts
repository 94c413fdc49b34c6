// `coord run --plugin webdriver` under Deno, as under Node: selenium-webdriver
// creates a headless Chrome session through it, opens a page served here,
// reads the title (a command the proxy sends straight to the driver) and
// quits; the session log ends CLOSED, HALT.
import t from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { coord } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { chromeOptions, startPage } from './support/webdriver.ts';

const page = await startPage();
const port = await freePort();
const apiPort = await freePort();
const grid = coord(['run', '--plugin', 'webdriver', '--set', `webdriver.proxy.port=${port}`, '--set', `webdriver.api.port=${apiPort}`], {}, 'deno');
t.teardown(async () => {
  grid.kill('SIGKILL');
  await page.close();
});
await grid.waitFor((l) => l.msg === 'ready', 120_000);

t.test('selenium-webdriver through the grid on Deno: session, page, title, quit', async (t) => {
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  const driver = await new webdriver.Builder().usingServer(`http://127.0.0.1:${port}`).forBrowser('chrome').setChromeOptions(options).build();
  const sessionId = (await driver.getSession()).getId();
  await driver.get(`${page.url}/deno`);
  t.equal(await driver.getTitle(), 'coord /deno');
  t.equal(await driver.getTitle(), 'coord /deno', 'again, on the kept-alive connection');
  await driver.quit();
  const session = (await (await fetch(`http://127.0.0.1:${apiPort}/api/sessions/${sessionId}`)).json()) as { state: string; log: { code: string }[] };
  t.equal(session.state, 'terminated');
  t.same(session.log.slice(-2).map((e) => e.code), ['CLOSED', 'HALT']);
});
