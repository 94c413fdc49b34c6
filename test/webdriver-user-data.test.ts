// The grid leaves user data alone: only the path and the new session's reply
// name a session, so the grid's id the client puts in a URL or types into a
// page reaches the page exactly as sent (it used to be swapped for
// chromedriver's own id everywhere in bodies). Through selenium-webdriver on
// a standalone grid (the proxy sends commands straight to chromedriver; a
// separate node's path passes bodies unread the same way).
import { createServer } from 'node:http';
import t from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { freePort } from './support/redis.ts';
import { chromeOptions, newSessionBody, startWebdriver, w3c } from './support/webdriver.ts';

/** A page with a form; what the browser submits is recorded here. */
const seen: { run: string | null; typed: string | null }[] = [];
const pagePort = await freePort();
const page = createServer((req, res) => {
  const url = new URL(req.url!, 'http://page');
  if (url.pathname === '/form') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>form</title><form action="/got"><input name="run" type="hidden" value="${url.searchParams.get('run') ?? ''}"><input id="typed" name="typed"><button id="send">send</button></form>`);
    return;
  }
  if (url.pathname === '/got') seen.push({ run: url.searchParams.get('run'), typed: url.searchParams.get('typed') });
  res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>got</title>');
});
await new Promise<void>((r) => page.listen(pagePort, '127.0.0.1', r));
const port = await freePort();
const grid = await startWebdriver({ options: { proxy: { port, externalUrl: 'https://grid.example.com' }, api: { port: 0 }, orchestrator: { slots: 1 } } });
t.teardown(async () => {
  await grid.handle.stop('test done');
  page.close();
  page.closeAllConnections();
});

t.test('proxy.externalUrl: a new session\'s webSocketUrl is built on it (wss:// for https)', async (t) => {
  const created = await w3c(`http://127.0.0.1:${port}`, 'POST', '/session', newSessionBody({ webSocketUrl: true }));
  const id = created.body.value!.sessionId!;
  t.equal(created.body.value!.capabilities!.webSocketUrl, `wss://grid.example.com/session/${id}/se/bidi`);
  t.equal((await w3c(`http://127.0.0.1:${port}`, 'DELETE', `/session/${id}`)).status, 200);
});

t.test("a page receives exactly the id text the client sent: in the URL's query and typed into an input", async (t) => {
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  const driver = await new webdriver.Builder().usingServer(`http://127.0.0.1:${port}`).forBrowser('chrome').setChromeOptions(options).build();
  t.teardown(() => driver.quit().catch(() => {}));
  const id = (await driver.getSession()).getId();
  await driver.get(`http://127.0.0.1:${pagePort}/form?run=${id}`);
  const input = await driver.findElement(webdriver.By.id('typed'));
  await input.sendKeys(id);
  t.equal(await input.getAttribute('value'), id, 'the input holds the id as typed, same length');
  t.equal(await driver.executeScript('return new URL(location.href).searchParams.get("run")'), id, 'the URL the page got carries it');
  await driver.findElement(webdriver.By.id('send')).click();
  await driver.wait(webdriver.until.titleIs('got'), 10_000);
  t.same(seen.at(-1), { run: id, typed: id }, 'the page server received exactly the client\'s id, twice');
  t.equal(await driver.executeScript(`return ${JSON.stringify(id)}`), id, 'a script argument and its result pass untouched');
});
