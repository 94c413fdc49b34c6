// A real redis-server restarted empty under a live session: the session goes
// on (its commands keep working past several heartbeats), its keys come back
// (active, status, upstream, its slot held and not free), the grid serves new
// clients without giving the held slot away, and quitting ends it as usual.
// Once with every role in one process (inline nodes), once split over
// separate coord processes with node processes (nodeMode=process).
import t, { type Test } from 'tap';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import { buildIfStale } from './support/build.ts';
import { coordSync } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';
import { chromeOptions, newSessionBody, startWebdriver, w3c } from './support/webdriver.ts';

buildIfStale();
const rig = await startPageRig(t, 'webdriver');
const { redis, backend, page: site } = rig;

const fast = { heartbeat: { interval: 1, nodeTtl: 4, managerTtl: 4 }, timeouts: { slotReclaimInterval: 2 } };

/** The grid seen through Redis (keys spelled as docs/layouts/webdriver.md lists them). */
function keysOf(prefix: string, orchestrator: string) {
  return {
    active: () => backend.send(['SMEMBERS', `${prefix}sessions.active`]) as Promise<string[]>,
    status: (id: string) => backend.send(['HGETALL', `${prefix}session:${id}:status`]) as Promise<string[]>,
    upstream: (id: string) => backend.send(['HGET', `${prefix}session:${id}:upstream`, 'port']) as Promise<string | null>,
    heartbeat: (id: string) => backend.send(['GET', `${prefix}session:${id}:heartbeat.node`]) as Promise<string | null>,
    held: async () => {
      const flat = (await backend.send(['HGETALL', `${prefix}orchestrator:${orchestrator}:slots.held`])) as string[];
      return Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]!]]))) as Record<string, string>;
    },
    available: () => backend.send(['LRANGE', `${prefix}orchestrator:${orchestrator}:slots.available`, 0, -1]) as Promise<string[]>,
  };
}

/** What both layouts go through: a selenium-webdriver session, Redis restarted empty, the session on; new clients; quit. */
async function survives(t: Test, port: number, prefix: string, orchestrator: string) {
  const base = `http://127.0.0.1:${port}`;
  const k = keysOf(prefix, orchestrator);
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  const driver = await new webdriver.Builder().usingServer(base).forBrowser('chrome').setChromeOptions(options).build();
  const id = (await driver.getSession()).getId();
  await driver.get(`${site.url}/before`);
  t.equal(await driver.getTitle(), 'coord /before');
  // the node keeps a copy of its keys from its first heartbeat after the session is served
  const slot = await until('the session holds its slot', async () => Object.entries(await k.held()).find(([, s]) => s === id)?.[0], 10_000);
  await until('the session is marked alive', async () => (await k.status(id)).includes('aliveAt'), 10_000);
  // two node heartbeats later, one of them has seen aliveAt and taken the copy
  for (let beat = 0; beat < 2; beat++) {
    const before = await k.heartbeat(id);
    await until('a node heartbeat after it was served', async () => {
      const now = await k.heartbeat(id);
      return now && now !== before;
    }, 10_000);
  }

  await redis.restart();
  t.same(await k.active(), [], 'Redis came back empty');

  await until('the session is active again with its status and upstream', async () => (await k.active()).includes(id) && (await k.status(id)).includes('aliveAt') && (await k.upstream(id)), 15_000);
  await until('its slot is held by it again and not free', async () => (await k.held())[slot] === id && !(await k.available()).includes(slot), 15_000);
  // past several node heartbeats (and the TTL a dead node's keys would have), the session is still served
  for (let beat = 0; beat < 5; beat++) {
    const before = await k.heartbeat(id);
    await until(`node heartbeat ${beat + 1} after the restart`, async () => {
      const now = await k.heartbeat(id);
      return now && now !== before;
    }, 10_000);
  }
  t.equal(await driver.getTitle(), 'coord /before', 'a command after the restart works');
  await driver.get(`${site.url}/after`);
  t.equal(await driver.getTitle(), 'coord /after', 'and navigation too');
  t.same(await k.available(), [`${orchestrator}:${slot.endsWith(':1') ? 2 : 1}`], 'only the other slot is free');
  const inspect = coordSync(['inspect', '--plugin', 'webdriver', '--redis', redis.url, '--prefix', prefix]);
  t.equal(inspect.status, 0, `the restored keys follow the layout: ${inspect.stdout}${inspect.stderr}`);

  // a new client gets the free slot; one more waits instead of getting the held slot
  const second = await until('a new session once managers and the orchestrator are back', async () => {
    const a = await w3c(base, 'POST', '/session', newSessionBody());
    return a.status === 200 ? a : undefined;
  }, 30_000);
  const secondId = second.body.value!.sessionId!;
  const waiting = w3c(base, 'POST', '/session', newSessionBody());
  const queue = async () => ((await (await fetch(`${base}/graphql`, { method: 'POST', body: JSON.stringify({ query: '{ sessionsInfo { sessionQueueRequests } }' }) })).json()) as { data: { sessionsInfo: { sessionQueueRequests: string[] } } }).data.sessionsInfo.sessionQueueRequests.length;
  await until('the third client waits in the queue', async () => (await queue()) === 1, 15_000);
  const held = await k.held();
  t.same(Object.values(held).sort(), [id, secondId].sort(), 'two sessions on two slots, each its own');
  t.equal((await w3c(base, 'DELETE', `/session/${secondId}`)).status, 200);
  const third = await waiting;
  t.equal(third.status, 200, 'the waiting client is served when the second quits');
  t.equal((await w3c(base, 'DELETE', `/session/${third.body.value!.sessionId}`)).status, 200);

  await driver.quit();
  await until('the restored session ends as usual: terminated, both slots free', async () => {
    const status = await k.status(id);
    return status.includes('terminatedAt') && !(await k.active()).includes(id) && (await k.available()).length === 2;
  }, 15_000);
  t.pass('quit ended the restored session and gave its slot back');
}

t.test('every role in one process (inline nodes)', async (t) => {
  const port = await freePort();
  const grid = await startWebdriver({ redis: redis.url, prefix: '{one}:', options: { ...fast, proxy: { port }, api: { port: 0 }, orchestrator: { slots: 2, id: 'orch-one' } } });
  t.teardown(() => grid.handle.stop('test done'));
  await survives(t, port, '{one}:', 'orch-one');
});

t.test('split over processes, with node processes', async (t) => {
  const port = await freePort();
  const sets = ['heartbeat.interval=1', 'heartbeat.nodeTtl=4', 'heartbeat.managerTtl=4', 'timeouts.slotReclaimInterval=2'];
  const role = (name: string, extra: string[] = []) => rig.run(name, { prefix: '{split}:', sets: [...sets, ...extra] });
  const ps = [role('proxy', [`proxy.port=${port}`]), role('manager'), role('orchestrator', ['orchestrator.slots=2', 'orchestrator.id=orch-split', 'orchestrator.nodeMode=process'])];
  await ready(...ps);
  await survives(t, port, '{split}:', 'orch-split');
  for (const p of ps) p.kill('SIGTERM');
  await Promise.all(ps.map((p) => p.exited));
});
