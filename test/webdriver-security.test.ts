// With webdriver.proxy.token set, every surface needs it: the proxy's HTTP
// commands, new sessions and /status, the API, BiDi WebSockets, and the
// nodes behind (which only the grid, knowing their key, may talk to). Each
// refusal is 401 and says nothing else: no session id, not even whether a
// session exists. A real WebdriverIO 9 client with the token works, BiDi
// included, and an outsider cannot attach to its BiDi socket. A session
// created with Basic auth is handed ID.SECRET: its commands need the token or
// that secret (WebdriverIO's user/key send credentials on POST /session only),
// never just the id — tested raw, with selenium-webdriver and with WebdriverIO.
import t, { type Test } from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { remote } from 'webdriverio';
import WebSocket from 'ws';
import { sessionToken } from '../plugins/webdriver/auth.ts';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';
import { chromeOptions, newSessionBody, startEmbeddedGrid, w3c, wsUpgrade, type W3CAnswer } from './support/webdriver.ts';

const TOKEN = 'sekret-token-1';
const port = await freePort();
const apiPort = await freePort();
const { backend, page } = await startEmbeddedGrid(t, { redis: 'embedded://security', options: { proxy: { port, token: TOKEN }, api: { port: apiPort }, orchestrator: { slots: 3 } } });
const base = `http://127.0.0.1:${port}`;
const api = `http://127.0.0.1:${apiPort}`;
const bearer = { authorization: `Bearer ${TOKEN}` };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** A refusal: 401, the W3C unauthorized error, and nothing that names a session. */
function refused(t: Test, answer: { status: number; text: string }, what: string) {
  t.equal(answer.status, 401, `${what}: 401`);
  t.notMatch(answer.text, UUID, `${what}: no session id in the answer`);
  t.equal((JSON.parse(answer.text) as W3CAnswer['body']).value?.error, 'unauthorized', `${what}: the W3C unauthorized error`);
}

async function http(url: string, method = 'GET', headers: Record<string, string> = {}, body?: string) {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, text: await res.text() };
}

/** A WebSocket upgrade by hand (to the proxy unless `at` names another port). */
const upgrade = (target: string, headers: Record<string, string> = {}, at = port) => wsUpgrade(at, target, headers);

const created = await w3c(base, 'POST', '/session', newSessionBody({ webSocketUrl: true }), bearer);
const id = created.body.value!.sessionId!;
const other = await w3c(base, 'POST', '/session', newSessionBody({ webSocketUrl: true }), bearer);
const otherId = other.body.value!.sessionId!;

t.test('two sessions made with the token; each webSocketUrl carries its own session token, not the grid token', async (t) => {
  t.equal(created.status, 200);
  t.equal(other.status, 200);
  const url = new URL(String(created.body.value!.capabilities!.webSocketUrl));
  t.equal(url.pathname, `/session/${id}/se/bidi`);
  t.equal(url.searchParams.get('token'), sessionToken(TOKEN, id), 'a token derived for this session');
  t.notMatch(url.toString(), TOKEN, 'the grid token is not in it');
});

t.test('behind a TLS load balancer: webSocketUrl follows X-Forwarded-Proto and X-Forwarded-Host', async (t) => {
  const behind = await w3c(base, 'POST', '/session', newSessionBody({ webSocketUrl: true }), { ...bearer, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'grid.example.com' });
  t.equal(behind.status, 200);
  const sid = behind.body.value!.sessionId!;
  t.equal(behind.body.value!.capabilities!.webSocketUrl, `wss://grid.example.com/session/${sid}/se/bidi?token=${sessionToken(TOKEN, sid)}`);
  t.equal((await w3c(base, 'DELETE', `/session/${sid}`, undefined, bearer)).status, 200);
});

t.test('the proxy: every HTTP surface refuses a request without the token, or with a wrong one', async (t) => {
  refused(t, await http(`${base}/session`, 'POST', {}, JSON.stringify(newSessionBody())), 'POST /session');
  refused(t, await http(`${base}/session/${id}/title`), 'a command');
  refused(t, await http(`${base}/session/${id}/url`, 'POST', {}, JSON.stringify({ url: page.url })), 'a command with a body');
  refused(t, await http(`${base}/session/${id}`, 'DELETE'), 'DELETE /session/{id}');
  refused(t, await http(`${base}/session/${id}/title`, 'GET', { authorization: 'Bearer nope' }), 'a wrong Bearer token');
  refused(t, await http(`${base}/session/${id}/title`, 'GET', { authorization: `Basic ${Buffer.from('me:nope').toString('base64')}` }), 'a wrong Basic password');
  refused(t, await http(`${base}/session/${id}/title?token=${TOKEN}`), 'the token in the query of an HTTP command (headers only)');
  refused(t, await http(`${base}/status`), '/status');
  refused(t, await http(`${base}/wd/hub/status`), '/wd/hub/status');
  refused(t, await http(`${base}/nowhere`), 'an unknown path');
  refused(t, await http(`${base}/session/00000000-0000-4000-8000-000000000000/title`), 'an unknown session');
  const health = await http(`${base}/healthz`);
  t.equal(health.status, 200, '/healthz answers without the token');
  t.notMatch(health.text, UUID);
  t.notMatch(health.text, /slot|session|orchestrator/i, '/healthz says nothing about the grid');
  t.equal((await w3c(base, 'GET', `/session/${id}/title`, undefined, bearer)).status, 200, 'the session is alive and served with the token');
});

t.test('the API: every path refuses without the token and lists sessions with it', async (t) => {
  for (const path of ['/api/sessions?state=active', '/api/sessions', `/api/sessions/${id}`, '/api/orchestrators', '/api/metrics', '/api/status', '/api/nowhere']) {
    refused(t, await http(`${api}${path}`), `API ${path}`);
  }
  refused(t, await http(`${api}/api/sessions?token=nope`), 'API with a wrong ?token=');
  const listed = await http(`${api}/api/sessions?state=active`, 'GET', bearer);
  t.equal(listed.status, 200);
  t.match(listed.text, id, 'with the token the API lists the session');
  t.equal((await http(`${api}/api/sessions?state=active&token=${TOKEN}`)).status, 200, '?token= works too (a browser)');
  const one = JSON.parse((await http(`${api}/api/sessions/${id}`, 'GET', bearer)).text) as { upstream: Record<string, string> };
  t.notOk('key' in one.upstream, "the node's key is not shown");
});

t.test('BiDi: refused without the token, with a wrong one, and with another session\'s token; opened with either right one', async (t) => {
  const path = `/session/${id}/se/bidi`;
  refused(t, await upgrade(path), 'no token');
  refused(t, await upgrade(`${path}?token=nope`), 'a wrong ?token=');
  refused(t, await upgrade(`${path}?token=${sessionToken(TOKEN, otherId)}`), "another session's token");
  refused(t, await upgrade(path, { authorization: 'Bearer nope' }), 'a wrong Bearer token');
  refused(t, await upgrade('/session/00000000-0000-4000-8000-000000000000/se/bidi'), 'an unknown session');
  refused(t, await upgrade('/session/x/se/cdp'), 'any other WebSocket path');
  t.equal((await upgrade(`${path}?token=${sessionToken(TOKEN, id)}`)).status, 101, "the session's own token opens it");
  t.equal((await upgrade(path, bearer)).status, 101, 'the grid token in a header opens it');
  t.equal((await upgrade(`${path}?token=${TOKEN}`)).status, 101, 'the grid token in ?token= opens it');
});

t.test('a node answers only the grid: without its key, 401 for /status, commands and BiDi', async (t) => {
  const [host, nodePort] = (await backend.send(['HMGET', `session:${id}:upstream`, 'host', 'port'])) as string[];
  const node = `http://${host}:${nodePort}`;
  refused(t, await http(`${node}/status`), 'node /status');
  refused(t, await http(`${node}/session/${id}/title`), 'node command');
  refused(t, await http(`${node}/session/${id}/title`, 'GET', bearer), 'node command with the grid token (a node wants its key)');
  refused(t, await upgrade(`/session/${id}/se/bidi`, bearer, Number(nodePort)), 'node BiDi');
  t.equal((await w3c(base, 'GET', `/session/${id}/title`, undefined, bearer)).status, 200, 'through the proxy the session still works');
});

t.test('WebdriverIO 9 with the token: BiDi through the grid; an outsider cannot attach to its BiDi socket', async (t) => {
  const browser = await remote({ hostname: '127.0.0.1', port, path: '/', logLevel: 'silent', headers: bearer, capabilities: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions } });
  t.teardown(() => browser.deleteSession().catch(() => {}));
  await browser.url(`${page.url}/wdio-secure`);
  const tree = await browser.browsingContextGetTree({});
  t.equal(tree.contexts[0]?.url, `${page.url}/wdio-secure`, 'a BiDi command answered through the grid');
  t.equal(await browser.getTitle(), 'coord /wdio-secure');

  const bidiPath = `/session/${browser.sessionId}/se/bidi`;
  const outsider = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${bidiPath}`);
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => (ws.close(), resolve(101)));
    ws.on('error', () => resolve(-1));
  });
  t.equal(outsider, 401, 'an outsider who knows the session id is still refused');
  t.equal(await browser.getTitle(), 'coord /wdio-secure', 'the session goes on');
});

t.test('a session created with Basic auth: its id as handed is ID.SECRET; the bare id takes no command without the token', async (t) => {
  const basic = { authorization: `Basic ${Buffer.from(`ci:${TOKEN}`).toString('base64')}` };
  const made = await w3c(base, 'POST', '/session', newSessionBody({ webSocketUrl: true }), basic);
  t.equal(made.status, 200);
  const handed = made.body.value!.sessionId!;
  const [bare = '', secret] = handed.split('.');
  t.match(bare, new RegExp(`^${UUID.source}$`, 'i'), 'the grid id comes first');
  t.equal(secret, sessionToken(TOKEN, bare), "then the session's own secret");
  t.equal(new URL(String(made.body.value!.capabilities!.webSocketUrl)).pathname, `/session/${bare}/se/bidi`, 'webSocketUrl names the grid id (its ?token= is the secret)');

  refused(t, await http(`${base}/session/${bare}/title`), 'the bare id, no credentials (anyone who learns the id)');
  refused(t, await http(`${base}/session/${bare}/url`, 'POST', {}, JSON.stringify({ url: page.url })), 'the bare id, a command with a body');
  refused(t, await http(`${base}/session/${bare}`, 'DELETE'), 'the bare id, DELETE');
  refused(t, await http(`${base}/session/${bare}/title`, 'GET', { authorization: 'Bearer nope' }), 'the bare id, a wrong token');
  refused(t, await http(`${base}/session/${handed}/title`, 'GET', { authorization: 'Bearer nope' }), 'ID.SECRET with a wrong token');
  refused(t, await http(`${base}/session/${bare}.${sessionToken(TOKEN, otherId)}/title`), "the id with another session's secret");
  refused(t, await http(`${base}/session/${bare}.${sessionToken('another-grid', bare)}/title`), 'the id with a secret made from another token');
  refused(t, await http(`${base}/session/${id}.${secret}/title`), "another session's id with this session's secret");
  refused(t, await upgrade(`/session/${bare}/se/bidi`), 'its BiDi socket without a token');

  t.equal((await w3c(base, 'POST', `/session/${handed}/url`, { url: `${page.url}/handed` })).status, 200, 'ID.SECRET without credentials: served');
  t.equal((await w3c(base, 'GET', `/session/${handed}/title`)).body.value, 'coord /handed');
  t.equal((await w3c(base, 'GET', `/wd/hub/session/${handed}/title`)).body.value, 'coord /handed', 'with the Selenium 3 prefix too');
  t.equal((await w3c(base, 'GET', `/session/${bare}/title`, undefined, basic)).body.value, 'coord /handed', 'the bare id with the token: served');
  t.equal((await upgrade(`/session/${handed}/se/bidi`)).status, 101, 'ID.SECRET opens its BiDi socket');
  t.equal((await w3c(base, 'DELETE', `/session/${handed}`)).status, 200, 'and ends it');
  t.equal((await w3c(base, 'GET', `/session/${handed}/title`)).body.value?.error, 'invalid session id', 'ended');
});

t.test('selenium-webdriver with http://user:TOKEN@host: end to end; an outsider with its id is refused', async (t) => {
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  const driver = await new webdriver.Builder().usingServer(`http://ci:${TOKEN}@127.0.0.1:${port}`).forBrowser('chrome').setChromeOptions(options).build();
  t.teardown(() => driver.quit().catch(() => {}));
  await driver.get(`${page.url}/selenium-basic`);
  t.equal(await driver.getTitle(), 'coord /selenium-basic');
  const bare = (await driver.getSession()).getId().split('.')[0]!;
  refused(t, await http(`${base}/session/${bare}/title`), 'its id without credentials');
  const cdp = await driver.createCDPConnection('page');
  t.ok(cdp, 'its se:cdp socket opens (the session token in the URL)');
  t.equal(await driver.executeScript('return document.title'), 'coord /selenium-basic', 'still served');
  await driver.quit();
});

t.test("WebdriverIO's user/key (Basic auth on POST /session only): the session's commands and BiDi work through ID.SECRET, and quit frees the slot", async (t) => {
  const browser = await remote({ hostname: '127.0.0.1', port, path: '/', logLevel: 'silent', user: 'ci', key: TOKEN, capabilities: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions } });
  const [bare = ''] = browser.sessionId.split('.');
  t.equal(browser.sessionId, `${bare}.${sessionToken(TOKEN, bare)}`, 'WebdriverIO holds ID.SECRET');
  await browser.url(`${page.url}/user-key`);
  t.equal(await browser.getTitle(), 'coord /user-key', 'commands without credentials are taken through the secret in the id');
  t.equal((await browser.browsingContextGetTree({})).contexts[0]?.url, `${page.url}/user-key`, 'BiDi too');
  refused(t, await http(`${base}/session/${bare}/title`), 'its bare id without credentials');
  refused(t, await http(`${base}/session/${browser.sessionId}/title`, 'GET', { authorization: 'Bearer nope' }), 'a wrong token on that session');
  refused(t, await http(`${base}/session/${id}/title`), 'a session made with a Bearer token still needs it');
  await browser.deleteSession();
  const free = async () => ((await w3c(base, 'GET', '/status', undefined, bearer)).body.value as unknown as { slots: { available: number } }).slots.available;
  await until('its slot is free', async () => (await free()) === 1, 10_000);
  t.pass('quit freed its slot');
  const wrongKey = await remote({ hostname: '127.0.0.1', port, path: '/', logLevel: 'silent', user: 'ci', key: 'nope', connectionRetryCount: 0, capabilities: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions } }).then(() => 'created', (e: Error) => e.message);
  t.match(wrongKey, /401|unauthorized|missing or wrong token/i, 'a wrong key: no session is made');
});

t.test('cleanup with the token', async (t) => {
  t.equal((await w3c(base, 'DELETE', `/session/${id}`, undefined, bearer)).status, 200);
  t.equal((await w3c(base, 'DELETE', `/session/${otherId}`, undefined, bearer)).status, 200);
});
