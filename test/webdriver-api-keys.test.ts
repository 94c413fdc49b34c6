// API keys beside proxy.token (wdk_…): made, listed and revoked with `coord
// webdriver apikey` against two real grids on one redis-server, each with two
// proxy processes and a manager + orchestrator process (real chromedriver and
// Chromium). On the grid with a token, a new key opens both proxies within a
// heartbeat for selenium-webdriver (http://ci:KEY@host) and WebdriverIO
// (user/key, BiDi included); a session's own secret, derived from the token,
// opens it on the other proxy too; Redis holds only the key's hash; a revoked
// key is refused by both proxies within a heartbeat while the token works on,
// and the sessions it made run on through their own secrets. On the grid
// without a token, the first key closes it and sessions' secrets come from
// one random secret in Redis that both proxies share, so a session made on
// one proxy is driven through the other; revoking the last key leaves the
// grid closed. First, a role's view of it all (GridAccess) on the same Redis.
import t, { type Test } from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { remote } from 'webdriverio';
import { keyBuilders } from '../entries/plugin.ts';
import { GridAccess, gridSecret, webdriverApiKeys } from '../plugins/webdriver/access.ts';
import { sessionToken, UNAUTHORIZED_MESSAGE } from '../plugins/webdriver/auth.ts';
import { contract } from '../plugins/webdriver/contract.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, oneLineError } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';
import { chromeOptions, gridId, newSessionBody, w3c, wsUpgrade } from './support/webdriver.ts';

buildIfStale();
const rig = await startPageRig(t, 'webdriver');
const { backend, page } = rig;
const TOKEN = 'deployment-token-7';
const fast = ['heartbeat.interval=1', 'heartbeat.nodeTtl=5', 'heartbeat.managerTtl=5'];

/** Two proxy processes and one manager + orchestrator process of one grid. */
async function grid(prefix: string, orchestrator: string, extra: string[]) {
  const ports = [await freePort(), await freePort()];
  const sets = [...fast, ...extra];
  const proxies = ports.map((port) => rig.run('proxy', { prefix, sets: [...sets, `proxy.port=${port}`] }));
  const back = rig.run('manager', { prefix, sets: [...sets, 'orchestrator.slots=3', `orchestrator.id=${orchestrator}`], args: ['--role', 'orchestrator'] });
  const bases = ports.map((port) => `http://127.0.0.1:${port}`);
  /** GET /status on both proxies with these headers: the two statuses. */
  const statuses = (headers: Record<string, string> = {}) => Promise.all(bases.map(async (base) => (await fetch(`${base}/status`, { headers })).status));
  const cli = (...args: string[]) => coordSync(['webdriver', 'apikey', ...args, '--redis', rig.redis.url, '--prefix', prefix, ...sets.flatMap((s) => ['--set', `webdriver.${s}`])]);
  return { prefix, ports, bases, proxies, back, statuses, cli };
}

const withToken = await grid('{wkt}:', 'orch-t', [`proxy.token=${TOKEN}`]);
const keysOnly = await grid('{wkk}:', 'orch-k', []);
await ready(...withToken.proxies, withToken.back, ...keysOnly.proxies, keysOnly.back);

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`ci:${secret}`).toString('base64')}` });
const capabilities = { browserName: 'chrome', 'goog:chromeOptions': chromeOptions };
const chromeFor = () => new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);

/** A refusal: 401, the W3C unauthorized error, its one-line message. */
async function refused(t: Test, res: Response, what: string) {
  t.equal(res.status, 401, `${what}: 401`);
  const body = (await res.json()) as { value: { error: string; message: string } };
  t.equal(body.value.error, 'unauthorized', `${what}: the W3C unauthorized error`);
  t.equal(body.value.message, UNAUTHORIZED_MESSAGE, `${what}: one line saying what to send`);
  t.notMatch(body.value.message, /\n/);
}

/** `coord webdriver apikey create NAME`: the key, from standard output alone. */
function create(t: Test, g: typeof withToken, name: string): string {
  const made = g.cli('create', name);
  t.equal(made.status, 0, made.stderr);
  const key = made.stdout.trim();
  t.match(key, /^wdk_[\w-]{43}$/, 'the key, on standard output alone (47 characters: no length WebdriverIO takes for a cloud\'s key)');
  t.match(made.stderr, new RegExp(`API key [0-9a-f]{12} \\(${name}\\) created: every proxy accepts it within one heartbeat \\(1 s\\)`));
  return key;
}

t.test('a role\'s view: open; closed by a key; closed with none left; its secret written back to a Redis that lost it', async (t) => {
  const keys = keyBuilders(contract, '{wku}:');
  const access = new GridAccess(backend, keys, undefined);
  await access.refresh();
  t.notOk(access.closed, 'no token, no key, no grid secret: open');
  t.equal(access.secret, undefined);
  const apiKeys = webdriverApiKeys(backend, keys);
  const secret = await gridSecret(backend, keys);
  t.equal(await gridSecret(backend, keys), secret, 'made once: SET NX keeps the first');
  const { key } = await apiKeys.create('unit', Date.now());
  await access.refresh();
  t.ok(access.closed, 'a key closes the grid');
  t.ok(access.accepts(key), 'and is accepted');
  t.notOk(access.accepts(`${key}x`) || access.accepts('wdk_nope') || access.accepts(''), 'nothing else is');
  t.equal(access.secret, secret, 'session secrets come from the grid secret');
  await apiKeys.revoke('unit');
  await access.refresh();
  t.ok(access.closed, 'its last key revoked: still closed');
  t.notOk(access.accepts(key), 'the key is refused');
  await backend.send(['DEL', keys.gridSecret(), keys.apiKeys()]);
  await access.refresh();
  t.equal(await backend.send(['GET', keys.gridSecret()]), secret, 'Redis lost it (restarted empty): the role writes back the secret it knew');
  t.ok(access.closed);
  const withToken = new GridAccess(backend, keys, 'tok');
  await withToken.refresh();
  t.same([withToken.closed, withToken.secret, withToken.accepts('tok'), withToken.accepts('nope')], [true, 'tok', true, false], 'with a token: the token is the secret, as it always was');
});

let key = '';

t.test('a grid with a token: a key made with the CLI opens both proxies within a heartbeat; Redis holds only its hash', async (t) => {
  key = create(t, withToken, 'ci-bot');
  const at = Date.now();
  await until('both proxies accept the key', async () => (await withToken.statuses(bearer(key))).every((s) => s === 200), 30_000, 100);
  t.comment(`accepted by both proxies ${Date.now() - at} ms after it was made (heartbeat 1 s)`);
  for (const base of withToken.bases) {
    await refused(t, await fetch(`${base}/status`, { headers: bearer('wdk_not-a-key-at-all') }), 'a made-up key');
    await refused(t, await fetch(`${base}/status`, { headers: basic(`${key}x`) }), 'a wrong key as the Basic password');
    await refused(t, await fetch(`${base}/status`), 'nothing sent');
  }
  t.same(await withToken.statuses(basic(key)), [200, 200], 'the key as Basic auth\'s password');
  t.same(await withToken.statuses(bearer(TOKEN)), [200, 200], 'the deployment token keeps working');
  const stored = (await backend.send(['HGETALL', `${withToken.prefix}apikeys`])) as string[];
  t.equal(stored.length, 2, 'one key in Redis');
  t.notOk(stored.some((s) => s.includes(key) || s.includes(key.slice(4))), 'not the key itself');
  t.match(JSON.parse(stored[1]!), { name: 'ci-bot', id: /^[0-9a-f]{12}$/, createdAt: /^\d{4}-/ });
  t.equal(await backend.send(['EXISTS', `${withToken.prefix}grid.secret`]), 0, 'with a token, no grid secret: sessions\' secrets come from the token');
});

let selenium: webdriver.WebDriver | undefined;
let wdio: Awaited<ReturnType<typeof remote>> | undefined;

t.test('selenium-webdriver (http://ci:KEY@host) on one proxy, WebdriverIO (user/key, BiDi) on the other', async (t) => {
  const [first, second] = withToken.ports as [number, number];
  selenium = await new webdriver.Builder().usingServer(`http://ci:${key}@127.0.0.1:${first}`).forBrowser('chrome').setChromeOptions(chromeFor()).build();
  await selenium.get(`${page.url}/selenium-key`);
  t.equal(await selenium.getTitle(), 'coord /selenium-key', 'selenium-webdriver with the key as the password of its URL');

  wdio = await remote({ hostname: '127.0.0.1', port: second, path: '/', logLevel: 'silent', user: 'ci', key, capabilities });
  const bare = gridId(wdio.sessionId);
  t.equal(wdio.sessionId, `${bare}.${sessionToken(TOKEN, bare)}`, 'WebdriverIO holds ID.SECRET, the secret derived from the token');
  await wdio.url(`${page.url}/wdio-key`);
  t.equal(await wdio.getTitle(), 'coord /wdio-key', 'its commands pass through the secret in the id (credentials were sent on POST /session only)');
  t.equal((await wdio.browsingContextGetTree({})).contexts[0]?.url, `${page.url}/wdio-key`, 'its BiDi WebSocket (webSocketUrl with the session\'s own token)');

  const there = await w3c(withToken.bases[0]!, 'GET', `/session/${wdio.sessionId}/title`);
  t.equal(there.body.value, 'coord /wdio-key', 'the session made on one proxy is driven through the other by its secret');
  await refused(t, await fetch(`${withToken.bases[0]}/session/${bare}/title`), 'its bare id without credentials');
});

t.test('coord webdriver apikey list shows the key by id and name, never the key', async (t) => {
  const listed = withToken.cli('list', '--json');
  t.equal(listed.status, 0, listed.stderr);
  const records = JSON.parse(listed.stdout) as { id: string; name: string; createdAt: string }[];
  t.same(records.map((r) => r.name), ['ci-bot']);
  t.notOk(listed.stdout.includes(key), 'not in JSON');
  const table = withToken.cli('list');
  t.match(table.stdout, new RegExp(`${records[0]!.id}\\s+ci-bot`));
  t.notOk(table.stdout.includes(key), 'not in the table');
});

t.test('revoked: both proxies refuse the key within a heartbeat, the token works on, its sessions run on through their own secrets', async (t) => {
  const [record] = JSON.parse(withToken.cli('list', '--json').stdout) as { id: string }[];
  const revoked = withToken.cli('revoke', record!.id);
  t.equal(revoked.status, 0, revoked.stderr);
  t.equal(revoked.stdout.trim(), `revoked ${record!.id} (ci-bot)`);
  const gone = Date.now();
  await until('both proxies refuse the revoked key', async () => (await withToken.statuses(bearer(key))).every((s) => s === 401), 30_000, 100);
  const took = Date.now() - gone;
  t.comment(`refused by both proxies ${took} ms after the revocation (heartbeat 1 s)`);
  t.ok(took < 10_000, `within a few heartbeats, with no restart (${took} ms)`);
  for (const base of withToken.bases) {
    await refused(t, await fetch(`${base}/status`, { headers: bearer(key) }), 'the revoked key as a bearer token');
    await refused(t, await fetch(`${base}/session`, { method: 'POST', headers: { ...basic(key), 'content-type': 'application/json' }, body: JSON.stringify(newSessionBody()) }), 'a new session with the revoked key');
  }
  t.same(await withToken.statuses(bearer(TOKEN)), [200, 200], 'the token still works');

  t.equal(await wdio!.getTitle(), 'coord /wdio-key', 'a session reached through its own secret (WebdriverIO\'s ID.SECRET) runs on');
  await t.rejects(selenium!.getTitle(), /missing or wrong token/, 'a client sending the revoked key with each command is refused');
  const seleniumId = gridId((await selenium!.getSession()).getId());
  t.equal((await w3c(withToken.bases[0]!, 'DELETE', `/session/${seleniumId}`, undefined, bearer(TOKEN))).status, 200, 'the token ends that session');
  await wdio!.deleteSession();
  for (const p of [...withToken.proxies, withToken.back]) t.equal(p.child.exitCode, null, 'the processes kept running');
});

t.test('a grid without a token: the first key closes it; session secrets come from one grid secret both proxies share', async (t) => {
  t.same(await keysOnly.statuses(), [200, 200], 'no token, no key: open');
  const key = create(t, keysOnly, 'k-bot');
  const secret = (await backend.send(['GET', `${keysOnly.prefix}grid.secret`])) as string;
  t.match(secret, /^[\w-]{43}$/, 'the grid secret is in Redis (made once, by the CLI)');
  await until('both proxies closed, and open to the key', async () => (await keysOnly.statuses()).every((s) => s === 401) && (await keysOnly.statuses(bearer(key))).every((s) => s === 200), 30_000, 100);
  for (const base of keysOnly.bases) await refused(t, await fetch(`${base}/status`), 'nothing sent');

  const [first, second] = keysOnly.ports as [number, number];
  const made = await w3c(keysOnly.bases[0]!, 'POST', '/session', newSessionBody({ webSocketUrl: true }), basic(key));
  t.equal(made.status, 200, 'a new session with the key as Basic auth');
  const handed = made.body.value!.sessionId!;
  const bare = gridId(handed);
  t.equal(handed, `${bare}.${sessionToken(secret, bare)}`, 'handed ID.SECRET, the secret an HMAC of the grid secret');
  const socket = new URL(String(made.body.value!.capabilities!.webSocketUrl));
  t.equal(socket.searchParams.get('token'), sessionToken(secret, bare), 'its webSocketUrl carries the same secret');
  t.equal((await w3c(keysOnly.bases[1]!, 'POST', `/session/${handed}/url`, { url: `${page.url}/keys-only` })).status, 200, 'a command on the other proxy through ID.SECRET');
  t.equal((await w3c(keysOnly.bases[1]!, 'GET', `/session/${handed}/title`)).body.value, 'coord /keys-only');
  t.equal((await wsUpgrade(second, `${socket.pathname}${socket.search}`)).status, 101, 'its BiDi socket on the other proxy, with the webSocketUrl\'s token');
  t.equal((await wsUpgrade(first, `${socket.pathname}?token=nope`)).status, 401, 'a wrong token on its socket: 401');
  await refused(t, await fetch(`${keysOnly.bases[0]}/session/${bare}/title`), 'its bare id without credentials');

  const browser = await remote({ hostname: '127.0.0.1', port: second, path: '/', logLevel: 'silent', user: 'ci', key, capabilities });
  await browser.url(`${page.url}/wdio-keys-only`);
  t.equal(await browser.getTitle(), 'coord /wdio-keys-only', 'WebdriverIO with user/key');
  t.equal((await browser.browsingContextGetTree({})).contexts[0]?.url, `${page.url}/wdio-keys-only`, 'and its BiDi WebSocket');

  const revoked = keysOnly.cli('revoke', 'k-bot');
  t.equal(revoked.status, 0, revoked.stderr);
  await until('both proxies refuse the revoked key', async () => (await keysOnly.statuses(bearer(key))).every((s) => s === 401), 30_000, 100);
  t.same(await keysOnly.statuses(), [401, 401], 'its last key revoked, the grid stays closed (the grid secret is still there)');
  t.equal(await browser.getTitle(), 'coord /wdio-keys-only', 'a session reached through its own secret runs on');
  await browser.deleteSession();
  t.equal((await w3c(keysOnly.bases[1]!, 'DELETE', `/session/${handed}`)).status, 200, 'the raw session ends through its own secret');
});

t.test('mistyped input: one line each, no stack', async (t) => {
  oneLineError(t, keysOnly.cli('create'), 2, /^usage: coord webdriver apikey create NAME --redis URL/);
  oneLineError(t, keysOnly.cli('revoke'), 2, /^usage: coord webdriver apikey revoke ID\|NAME/);
  oneLineError(t, keysOnly.cli('revoke', 'nobody'), 1, /^no API key has the id or name "nobody" \(coord webdriver apikey list shows them\)$/);
  t.equal(withToken.cli('list').stdout.trim(), 'no API keys', 'list, with every key revoked');
});
