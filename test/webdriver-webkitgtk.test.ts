// WebKitGTK through the WebDriver grid: an orchestrator offering chrome and
// webkitgtk (Debian's webkit2gtk-driver: WebKitWebDriver and its MiniBrowser,
// on an Xvfb display the node starts, with no DISPLAY in the environment),
// real Redis. Selenium's JavaScript client runs the W3C commands, Debian's
// Python Selenium and WebdriverIO 9 make sessions as their users write them;
// /status, GraphQL and KEDA's count see MiniBrowser beside chrome; a recording
// asked of it is refused in words; nothing it started is left behind. And
// Firefox: named on a host without geckodriver, refused at start, naming it.
import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Builder, By, Capabilities } from 'selenium-webdriver';
import { remote } from 'webdriverio';
import { findExecutable } from '../core/executable.ts';
import { KEDA_QUERY, kedaCount } from './support/keda-selenium-grid.ts';
import { freePort, startRedis } from './support/redis.ts';
import { until } from './support/until.ts';
import { chromeOptions, startWebdriver, w3c } from './support/webdriver.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./fixtures/webdriver/webkitgtk_client.py', import.meta.url));
delete process.env.DISPLAY; // the grid starts the display MiniBrowser needs, as for a user with none
const missing = ['WebKitWebDriver', 'Xvfb'].filter((binary) => !findExecutable(binary));
if (missing.length) {
  t.fail(`${missing.join(' and ')} missing: install them with: bash scripts/install-deps.sh test (apt-get install webkit2gtk-driver xvfb)`);
} else {
  await webkitThroughGrid();
}

/** The processes a WebKitGTK session runs (its driver, browser and display), by name. */
function webkitProcesses(): string[] {
  const ps = spawnSync('pgrep', ['-a', '-f', 'WebKitWebDriver|MiniBrowser|Xvfb -displayfd'], { encoding: 'utf8' });
  return ps.stdout.split('\n').filter((line) => line && !line.includes('pgrep'));
}

async function webkitThroughGrid(): Promise<void> {
  const pagePort = await freePort();
  const pages = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>webkit ${req.url}</title>
<input id="text"><button id="b" onclick="this.textContent = 'clicked'">click me</button>`);
  });
  await new Promise<void>((resolve) => pages.listen(pagePort, '127.0.0.1', resolve));
  const page = `http://127.0.0.1:${pagePort}`;
  const redis = await startRedis();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const before = webkitProcesses().length;
  const grid = await startWebdriver({
    redis: redis.url,
    options: { proxy: { port }, api: { port: 0 }, orchestrator: { id: 'orch-wk', slots: 2, browsers: ['chrome', 'webkitgtk'] } },
  });
  t.teardown(async () => {
    await grid.handle.stop('test done');
    pages.closeAllConnections();
    pages.close();
    await redis.stop();
  });
  const status = async () => (await w3c(base, 'GET', '/status')).body.value as unknown as {
    ready: boolean;
    slots: { total: number; available: number };
    nodes: { stereotypes?: unknown; slots: { stereotype: { browserName: string; browserVersion: string }; session: unknown }[] }[];
  };
  await until('the orchestrator is registered', async () => (await status()).ready, 60_000, 200);

  t.test('the orchestrator offers MiniBrowser beside chrome: /status, GraphQL and KEDA see it', async (t) => {
    const s = await status();
    t.same(s.slots, { total: 2, available: 2 }, 'two slots, shared by both browsers');
    const graphql = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: KEDA_QUERY }) });
    const answer = (await graphql.json()) as { data: { nodesInfo: { nodes: { stereotypes: string }[] } } };
    const stereotypes = JSON.parse(answer.data.nodesInfo.nodes[0]!.stereotypes) as { stereotype: { browserName: string; browserVersion: string } }[];
    const names = stereotypes.map((s) => s.stereotype.browserName).sort();
    t.same(names, ['MiniBrowser', 'chrome'], 'a stereotype per browser');
    t.same(stereotypes.map((s) => (s as { slots?: number }).slots), [2, 2], 'each on the two slots they share, as a Selenium node offers each driver it found');
    t.same(kedaCount(answer as never, { browserName: 'MiniBrowser', platformName: 'linux' }), { newRequestNodes: 0, onGoingSessions: 0, errors: [] }, "KEDA's count for MiniBrowser: idle");
    t.equal(s.nodes[0]!.slots[0]!.stereotype.browserName, 'chrome', 'a free slot shows chrome first');
  });

  t.test('selenium-webdriver (JavaScript): the W3C commands on WebKitGTK', async (t) => {
    const started = Date.now();
    const driver = await new Builder().usingServer(base).withCapabilities(new Capabilities().setBrowserName('MiniBrowser')).build();
    t.teardown(() => driver.quit().catch(() => {}));
    const caps = await driver.getCapabilities();
    t.comment(`new session in ${Date.now() - started} ms`);
    t.equal(caps.get('browserName'), 'MiniBrowser');
    t.match(String(caps.get('browserVersion')), /^\d+\.\d+\.\d+$/);
    const s = await status();
    t.equal(s.slots.available, 1, 'it holds a slot');
    t.equal(s.nodes[0]!.slots.find((slot) => slot.session)?.stereotype.browserName, 'MiniBrowser', 'its slot shows MiniBrowser');

    await driver.get(`${page}/js`);
    t.equal(await driver.getTitle(), 'webkit /js', 'navigate, title');
    t.equal(await driver.getCurrentUrl(), `${page}/js`, 'current URL');
    await driver.findElement(By.css('#b')).click();
    t.equal(await driver.findElement(By.id('b')).getText(), 'clicked', 'find by css and id, click, text');
    await driver.findElement(By.id('text')).sendKeys('typed by selenium');
    t.equal(await driver.executeScript('return document.getElementById("text").value'), 'typed by selenium', 'send keys, execute script');
    t.equal(await driver.executeAsyncScript('const done = arguments[arguments.length - 1]; setTimeout(() => done(6 * 7), 10);'), 42, 'execute async script');
    const png = Buffer.from(await driver.takeScreenshot(), 'base64');
    t.equal(png.subarray(1, 4).toString(), 'PNG', 'a PNG screenshot');
    t.ok(png.readUInt32BE(16) > 100 && png.readUInt32BE(20) > 100, `of the page (${png.readUInt32BE(16)}×${png.readUInt32BE(20)})`);
    await driver.manage().window().setRect({ width: 800, height: 600 });
    const rect = await driver.manage().window().getRect();
    t.same([rect.width, rect.height], [800, 600], 'window rect set and read');
    await driver.manage().addCookie({ name: 'flavour', value: 'ginger' });
    t.equal((await driver.manage().getCookie('flavour'))?.value, 'ginger', 'a cookie added and read');
    await driver.manage().deleteCookie('flavour');
    t.same(await driver.manage().getCookies(), [], 'and deleted');
    t.match(await driver.getPageSource(), /click/, 'page source');
    await driver.get(`${page}/second`);
    await driver.navigate().back();
    t.equal(await driver.getTitle(), 'webkit /js', 'back');
    await driver.quit();
    await until('its slot is free again', async () => (await status()).slots.available === 2, 30_000, 100);
  });

  t.test("Debian's Python Selenium (webkitgtk.Options) through the grid", async (t) => {
    const config = { grid: base, page: `${page}/python` };
    const env = { ...process.env, http_proxy: '', HTTP_PROXY: '', no_proxy: '*' };
    const run = await new Promise<{ error: Error | null; stdout: string; stderr: string }>((resolve) =>
      execFile(PYTHON, [SCRIPT, JSON.stringify(config)], { env, timeout: 90_000, encoding: 'utf8' }, (error, stdout, stderr) => resolve({ error, stdout, stderr })),
    );
    if (run.error) return void t.fail(`the Python client failed: ${run.stderr.trim().split('\n').pop()}`, { stderr: run.stderr });
    const seen = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    t.comment(`python3-selenium ${seen.seleniumVersion}`);
    t.equal(seen.browserName, 'MiniBrowser');
    t.equal(seen.title, 'webkit /python');
    t.equal(seen.typed, 'typed by Python');
    t.equal(seen.sum, 42);
    t.ok((seen.screenshotBytes as number) > 1000, 'a screenshot');
  });

  t.test('WebdriverIO 9: session, page, title, typing, quit', async (t) => {
    const browser = await remote({ hostname: '127.0.0.1', port, path: '/', logLevel: 'silent', capabilities: { browserName: 'MiniBrowser' } });
    t.teardown(() => browser.deleteSession().catch(() => {}));
    await browser.url(`${page}/wdio`);
    t.equal(await browser.getTitle(), 'webkit /wdio');
    await browser.$('#text').setValue('typed by wdio');
    t.equal(await browser.$('#text').getValue(), 'typed by wdio');
    await browser.deleteSession();
  });

  t.test('a request naming no browser gets chrome, the first browser offered', async (t) => {
    const created = await w3c(base, 'POST', '/session', { capabilities: { alwaysMatch: {} } });
    t.equal(created.status, 200, created.body.value?.message ?? '');
    t.equal(created.body.value?.capabilities?.browserName, 'chrome');
    t.equal((await w3c(base, 'DELETE', `/session/${created.body.value?.sessionId}`)).status, 200);
  });

  t.test('a recording asked of WebKitGTK: session not created, saying why', async (t) => {
    const answer = await w3c(base, 'POST', '/session', { capabilities: { alwaysMatch: { browserName: 'MiniBrowser', 'se:recordVideo': true } } });
    t.equal(answer.status, 500);
    t.equal(answer.body.value?.error, 'session not created');
    t.match(answer.body.value?.message, /se:recordVideo: MiniBrowser \(webkitgtk\) sessions cannot be recorded/);
  });

  t.test('queueing per browser: a chrome request is not held behind MiniBrowser requests waiting for the only node that has MiniBrowser', async (t) => {
    const chromeOnly = await startWebdriver({ redis: redis.url, roles: ['orchestrator'], options: { orchestrator: { id: 'orch-chrome', slots: 1, browsers: ['chrome'] } } });
    t.teardown(() => chromeOnly.handle.stop('test done'));
    await until('the chrome-only orchestrator is registered', async () => (await status()).slots.total === 3, 60_000, 200);
    const miniBrowser = () => new Builder().usingServer(base).withCapabilities(new Capabilities().setBrowserName('MiniBrowser')).build();
    // both of orch-wk's slots taken by MiniBrowser sessions, and a third MiniBrowser request waiting for one
    const held = [await miniBrowser(), await miniBrowser()];
    t.teardown(async () => {
      for (const d of held) await d.quit().catch(() => {});
    });
    let thirdAt = 0;
    const third = miniBrowser().then((d) => ((thirdAt = Date.now()), held.push(d), d));
    t.teardown(() => third.then((d) => d.quit()).catch(() => {}));
    const queuedMiniBrowsers = async () => {
      const graphql = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: KEDA_QUERY }) });
      const answer = (await graphql.json()) as { data: { sessionsInfo: { sessionQueueRequests: string[] } } };
      return answer.data.sessionsInfo.sessionQueueRequests.filter((r) => JSON.parse(r).browserName === 'MiniBrowser').length;
    };
    await until('the third MiniBrowser request is queued', async () => (await queuedMiniBrowsers()) === 1, 30_000, 200);
    const chrome = await new Builder().usingServer(base).withCapabilities(new Capabilities().setBrowserName('chrome').set('goog:chromeOptions', chromeOptions)).build();
    const chromeAt = Date.now();
    t.equal((await chrome.getCapabilities()).get('browserName'), 'chrome', 'chrome served by the chrome-only node at once');
    t.equal(thirdAt, 0, 'while the MiniBrowser request that came first still waits for a MiniBrowser slot');
    await chrome.quit();
    await held.shift()!.quit(); // a MiniBrowser slot frees: the waiting request gets it
    const served = await third;
    t.equal((await served.getCapabilities()).get('browserName'), 'MiniBrowser', 'then the waiting MiniBrowser request is served');
    t.ok(thirdAt > chromeAt, 'after the chrome one that came later');
  });

  t.test('nothing a WebKitGTK session started is left: driver, MiniBrowser, Xvfb', async (t) => {
    const left = await until('the sessions\' processes are gone', async () => (webkitProcesses().length <= before ? [] : undefined), 30_000, 200).catch(() => webkitProcesses());
    t.same(left, [], 'no WebKitWebDriver, MiniBrowser or Xvfb of the grid is running');
  });

  t.test('firefox named on a host without geckodriver: the orchestrator refuses to start, naming it', async (t) => {
    const geckodriver = findExecutable('geckodriver');
    if (geckodriver) return void t.comment(`geckodriver is installed here (${geckodriver}): the refusal cannot be shown`);
    await t.rejects(
      startWebdriver({ redis: redis.url, options: { proxy: { port: 0 }, orchestrator: { id: 'orch-ff', browsers: ['firefox'] } } }),
      /webdriver\.orchestrator\.browsers names firefox, but this host has no geckodriver named "geckodriver" on PATH/,
    );
    const auto = await status();
    t.notOk(JSON.stringify(auto.nodes).includes('firefox'), 'and no orchestrator advertises firefox');
  });
}
