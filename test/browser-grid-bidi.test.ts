// WebDriver BiDi clients through the grid: puppeteer-core with protocol
// 'webDriverBiDi' on ws://HOST:PORT/bidi?browser=firefox, with the same token,
// slots, queue and give-back as the other clients; each client has a Firefox
// process of its own (Debian's firefox-esr), stopped when it leaves.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { firefox } from 'playwright-core';
import { findExecutable } from '../entries/plugin.ts';
import { type BidiClient, connectBidi } from './support/bidi-client.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

if (findExecutable('firefox-esr') || findExecutable('firefox')) await main();
else t.fail('firefox-esr missing: no firefox-esr or firefox on PATH; install it with: bash scripts/install-deps.sh test (apt-get install firefox-esr)');

async function main(): Promise<void> {
  // the grid's own temp folder: the Firefoxes it starts are those whose HOME is in it
  const temp = mkdtempSync(join(tmpdir(), 'coord-bidi-test-'));
  const folders = () => readdirSync(temp).filter((name) => name.startsWith('coord-bidi-'));
  const rig = await startPageRig(t, 'browser-grid');
  const { page } = rig;
  rig.atEnd(() => rmSync(temp, { recursive: true, force: true }));

  const prefix = '{bidi}:';
  const token = 'bidi-secret';
  // generous heartbeat slack and queue timeout: a loaded machine must not make the worker look stale
  const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'shutdownCommandTtl=5', 'drainTimeout=5',
    'maxConcurrentSessions=2', 'queueTimeout=180', `token=${token}`, 'cdp=false'];
  const run = (role: string, extra: string[]) => rig.run(role, { prefix, sets: [...sets, ...extra], env: { TMPDIR: temp } });
  const port = await freePort();
  const worker = run('worker', ['workers=1', 'bidi=true']);
  const proxy = run('proxy', [`port=${port}`]);
  await ready(worker, proxy);
  const bidiUrl = `ws://127.0.0.1:${port}/bidi?browser=firefox&token=${token}`;
  const clients: BidiClient[] = [];
  rig.atEnd(() => clients.forEach((c) => c.child.kill('SIGKILL')));
  const connect = async (url = bidiUrl) => {
    const client = await connectBidi(url);
    clients.push(client);
    return client;
  };
  const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}${path.includes('?') ? '&' : '?'}token=${token}`)).text();
  const firefoxStatus = async () => (JSON.parse(await get('/status')) as { types: Record<string, { active: number; queued: number; workers: number }> }).types.firefox!;

  /** Processes (Firefox and its content processes) started by the grid: their HOME is a folder in `temp`. */
  function firefoxes(): number[] {
    return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').some((v) => v.startsWith(`HOME=${temp}/coord-bidi-`));
      } catch {
        return false; // gone meanwhile
      }
    });
  }
  /** The Firefox main processes (those with --profile), one per client. */
  function mainFirefoxes(): number[] {
    return firefoxes().filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--profile');
      } catch {
        return false;
      }
    });
  }

  /** Opens the test's page in `client`'s browser, reads its title and evaluates a script there. */
  async function usePage(t: Test, client: BidiClient, path: string): Promise<void> {
    const { title, evaluated } = await client.open(`${page.url}${path}`);
    t.equal(title, `coord ${path}`, `the page's title through the grid (${path})`);
    t.equal(evaluated, 'hello 42', 'a script evaluated in it');
  }

  t.test('a client without the token gets 401, one asking /bidi for another browser 400, a Playwright Firefox client 428', async (t) => {
    await t.rejects(connect(`ws://127.0.0.1:${port}/bidi?browser=firefox`), /401/, 'the token is required on /bidi');
    await t.rejects(connect(`ws://127.0.0.1:${port}/bidi?browser=chromium&token=${token}`), /400/, '/bidi serves firefox');
    const error = await firefox.connect(`ws://127.0.0.1:${port}/?browser=firefox&token=${token}`, { timeout: 30_000 }).then(
      (b) => b.close().then(() => 'connected'),
      (e: Error) => e.message,
    );
    t.match(error, /428.*no firefox worker has a known Playwright version yet \(Firefox workers of browser-grid\.bidi serve WebDriver BiDi clients on \/bidi only\)/s, `a Playwright Firefox client is not given a BiDi worker: ${error.split('\n')[0]}`);
    t.same(mainFirefoxes(), [], 'no Firefox was started for them');
  });

  t.test('a Puppeteer BiDi client runs a page in a Firefox of its own', async (t) => {
    const started = Date.now();
    const client = await connect();
    t.match(client.version, /^firefox\//, 'it speaks to Firefox');
    await usePage(t, client, '/bidi-first');
    t.comment(`connected in ${client.connectMs} ms, first page done ${Date.now() - started} ms after the connect began`);
    t.equal(mainFirefoxes().length, 1, 'one Firefox, for this client');
    t.equal((await firefoxStatus()).active, 1, '/status counts the session');
    await client.leave('close');
    await until('session given back', async () => (await firefoxStatus()).active === 0, 30_000);
    await until('its Firefox stopped', () => firefoxes().length === 0, 30_000);
    t.pass('its Firefox and content processes stopped');
  });

  t.test('two clients at once each get their own Firefox; a third waits in the queue and is served when one leaves', async (t) => {
    const [a, b] = await Promise.all([connect(), connect()]);
    await Promise.all([usePage(t, a, '/a'), usePage(t, b, '/b')]);
    const two = mainFirefoxes();
    t.equal(two.length, 2, `two Firefox processes (${two.join(', ')})`);
    t.notOk((await b.pages()).some((url) => url.includes('/a')), 'b does not see a\'s page');

    t.equal((await firefoxStatus()).active, 2, '/status: two firefox sessions');
    const capacity = JSON.parse(await get('/v1/capacity')) as { browsers: { browser: string; workers: number; max_slots: number; active_sessions: number; available_slots: number; queued: number }[] };
    t.match(capacity.browsers.find((x) => x.browser === 'firefox'), { workers: 1, max_slots: 2, active_sessions: 2, available_slots: 0 }, '/v1/capacity: firefox full');
    const metrics = await get('/metrics');
    t.ok(Number(/^coord_grid_connections_total\{browser="firefox",result="relayed"\} (\d+)/m.exec(metrics)?.[1]) >= 3, '/metrics counts the firefox sessions relayed');
    t.match(metrics, /^coord_grid_relays_active 2$/m, '/metrics: two relays now');

    const third = connect();
    await until('the third client queued', async () => (await firefoxStatus()).queued === 1, 30_000);
    t.pass('/status shows it queued');
    t.equal(mainFirefoxes().length, 2, 'no Firefox started for it while it waits');
    await a.leave('disconnect'); // a client leaving without closing its browser: the grid stops it
    const c = await third;
    await usePage(t, c, '/c');
    t.equal((await firefoxStatus()).queued, 0, 'the queue is empty');
    await until('a\'s Firefox stopped', () => two.some((pid) => !mainFirefoxes().includes(pid)), 30_000);
    t.pass('one of the two first Firefoxes (a\'s) was stopped');
    await b.leave('close');
    await c.leave('disconnect');
    await until('sessions given back', async () => (await firefoxStatus()).active === 0, 30_000);
    await until('every Firefox stopped', () => firefoxes().length === 0, 30_000);
    t.pass('no Firefox process is left');
  });

  t.test('a worker with bidi on and no Firefox binary refuses to start, naming the option', async (t) => {
    const broken = run('worker', ['workers=1', 'bidi=true', 'firefoxBinary=/nonexistent/firefox']);
    t.not(await broken.exited, 0, 'it exits with an error');
    t.match(broken.stderr(), /browser-grid\.firefoxBinary: there is no executable at \/nonexistent\/firefox/, broken.stderr());
  });

  t.test('the grid stops cleanly', async (t) => {
    for (const p of [worker, proxy]) p.kill('SIGTERM');
    t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
    t.same(folders(), [], 'no Firefox folder is left in the temp folder');
    t.same(firefoxes(), [], 'no Firefox process is left');
  });

  t.test('a worker killed -9 during a session leaves no Firefox behind', async (t) => {
    const doomed = run('worker', ['workers=1', 'bidi=true']);
    const otherPort = await freePort();
    const other = run('proxy', [`port=${otherPort}`]);
    await ready(doomed, other);
    const client = await connect(`ws://127.0.0.1:${otherPort}/bidi?browser=firefox&token=${token}`);
    await usePage(t, client, '/doomed');
    t.equal(mainFirefoxes().length, 1, 'its Firefox runs');
    doomed.kill('SIGKILL');
    await doomed.exited;
    await until('its Firefox and content processes killed', () => firefoxes().length === 0, 30_000);
    t.pass('no Firefox process outlived the worker');
    await until('its folder removed', () => folders().length === 0, 30_000);
    t.pass('no Firefox folder is left in the temp folder');
    other.kill('SIGTERM');
    t.equal(await other.exited, 0);
  });
}
