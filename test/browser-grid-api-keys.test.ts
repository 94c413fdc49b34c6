// API keys beside the token (playwright-distributed's pwd_…): made, listed
// and revoked with `coord grid apikey` against a running grid of two proxy
// processes and a worker (real Redis, real Chromium, a real Playwright
// client). A new key opens both proxies within a heartbeat, for REST and
// WebSocket clients; the token keeps working; Redis holds only its hash; a
// revoked key is refused by both proxies within a heartbeat, with no restart.
import t from 'tap';
import { chromium } from 'playwright-core';
import { tokenAccepted } from '../plugins/browser-grid/proxy/answers.ts';
import { coordSync, oneLineError } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

t.test('who may use a grid: neither token nor key, open; either set, closed but to them', async (t) => {
  const req = (authorization?: string) => ({ headers: authorization ? { authorization } : {} }) as never;
  const url = (query = '') => new URL(`http://proxy/v1/capacity${query}`);
  const keys = (...known: string[]) => ({ size: known.length, has: (s: string) => known.includes(s) });
  t.ok(tokenAccepted(undefined, req(), url(), keys()), 'no token, no key: open, as playwright-distributed with no key');
  t.notOk(tokenAccepted(undefined, req(), url(), keys('pwd_a')), 'a key and nothing sent: refused');
  t.ok(tokenAccepted(undefined, req('Bearer pwd_a'), url(), keys('pwd_a')), 'the key as a bearer token');
  t.ok(tokenAccepted('tok', req(), url('?token=pwd_a'), keys('pwd_a')), 'or as ?token=, beside a token');
  t.ok(tokenAccepted('tok', req('Bearer wrong'), url('?token=tok'), keys('pwd_a')), 'the token in the query when the header is wrong');
  t.notOk(tokenAccepted('tok', req('Bearer pwd_b'), url(), keys('pwd_a')), 'another key: refused');
});

const rig = await startPageRig(t, 'browser-grid');
const prefix = '{keys}:';
const token = 'deployment-token';
const sets = ['heartbeatInterval=1', 'cdp=false', 'workers=1', 'maxConcurrentSessions=2', `token=${token}`];
const ports = [await freePort(), await freePort()];
const worker = rig.run('worker', { prefix, sets });
const proxies = ports.map((port) => rig.run('proxy', { prefix, sets: [...sets, `port=${port}`] }));
await ready(worker, ...proxies);
const cli = (...args: string[]) => coordSync(['grid', 'apikey', ...args, '--redis', rig.redis.url, '--prefix', prefix]);
const status = async (port: number, bearer: string) => (await fetch(`http://127.0.0.1:${port}/v1/capacity`, { headers: { authorization: `Bearer ${bearer}` } })).status;
const everyProxy = async (bearer: string) => Promise.all(ports.map((port) => status(port, bearer)));

t.test('a key made with coord grid apikey create opens both proxies within a heartbeat; Redis holds only its hash', async (t) => {
  const made = coordSync(['grid', 'apikey', 'create', 'ci-bot', '--redis', rig.redis.url, '--prefix', prefix]);
  t.equal(made.status, 0, made.stderr);
  const key = made.stdout.trim();
  t.match(key, /^pwd_[\w-]{32}$/, 'the key, on standard output alone');
  t.match(made.stderr, /API key [0-9a-f]{12} \(ci-bot\) created/);
  t.same(await everyProxy('pwd_not-a-key'), [401, 401], 'a made-up key: refused');
  const at = Date.now();
  await until('both proxies accept the key', async () => (await everyProxy(key)).every((s) => s === 200), 30_000, 100);
  t.comment(`accepted by both proxies ${Date.now() - at} ms after it was made (heartbeat 1 s)`);
  const stored = (await rig.backend.send(['HGETALL', `${prefix}apikeys`])) as string[];
  t.equal(stored.length, 2, 'one key in Redis');
  t.notOk(stored.some((s) => s.includes(key)), 'not the key itself');
  t.match(JSON.parse(stored[1]!), { name: 'ci-bot', id: /^[0-9a-f]{12}$/ });
  t.same(await everyProxy(token), [200, 200], 'the deployment token keeps working');

  const browser = await chromium.connect(`ws://127.0.0.1:${ports[1]}/?browser=chromium&token=${key}`, { timeout: 60_000 });
  const page = await browser.newPage();
  await page.goto(`${rig.page.url}/with-a-key`);
  t.equal(await page.title(), 'coord /with-a-key', 'a Playwright client with the key as ?token=');
  await browser.close();

  const listed = cli('list', '--json');
  t.equal(listed.status, 0);
  const records = JSON.parse(listed.stdout) as { id: string; name: string }[];
  t.same(records.map((r) => r.name), ['ci-bot'], 'list shows the key by id and name');
  t.notOk(listed.stdout.includes(key), 'never the key');

  const revoked = cli('revoke', records[0]!.id);
  t.equal(revoked.status, 0);
  t.match(revoked.stdout, `revoked ${records[0]!.id} (ci-bot)`);
  const gone = Date.now();
  await until('both proxies refuse the revoked key', async () => (await everyProxy(key)).every((s) => s === 401), 30_000, 100);
  const took = Date.now() - gone;
  t.comment(`refused by both proxies ${took} ms after the revocation (heartbeat 1 s)`);
  t.ok(took < 10_000, `within a few heartbeats, with no restart (${took} ms)`);
  t.same(await everyProxy(token), [200, 200], 'the token still works');
  for (const p of proxies) t.equal(p.child.exitCode, null, 'the proxies kept running');
});

t.test('bad input: one line each', async (t) => {
  oneLineError(t, cli('create'), 2, /^usage: coord grid apikey create NAME/);
  oneLineError(t, cli('revoke', 'nobody'), 1, /^no API key has the id or name "nobody"/);
  t.equal(cli('list').stdout.trim(), 'no API keys');
});
