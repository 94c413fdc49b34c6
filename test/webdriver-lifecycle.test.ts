// Every way a session can end, with its log code, through in-process grids on
// the embedded backend: idle (STIMEOUT), the driver dying (DFAILURE) or
// refusing the session (DFAILURE), a driver too slow to start (DTIMEOUT +
// STARTFAIL), a node too slow (NTIMEOUT), an orchestrator that never
// schedules (OTIMEOUT), a client that leaves while queued (CLEFT). Each
// leaves nothing held: the session is terminated and its slot is back. A
// session that ends cleanly hands its chromedriver on to the next one.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/webdriver/index.ts';
import type { Ctx } from '../plugins/webdriver/context.ts';
import { registerOrchestrator } from '../plugins/webdriver/scripts.ts';
import { freePort } from './support/redis.ts';
import { newSessionBody, startWebdriver, w3c, type WebdriverProcess } from './support/webdriver.ts';

const dir = mkdtempSync(join(tmpdir(), 'coord-wd-life-'));
const slowDriver = join(dir, 'slow-chromedriver');
writeFileSync(slowDriver, '#!/bin/sh\nsleep 3\nexec /usr/bin/chromedriver "$@"\n');
chmodSync(slowDriver, 0o755);
const grids: WebdriverProcess[] = [];
t.teardown(async () => {
  for (const g of grids) await g.handle.stop('test done');
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A whole grid in this process on its own embedded dataset; returns its URL and a reader of that dataset. */
async function grid(options: Record<string, unknown>) {
  const name = `life${++n}`;
  const port = await freePort();
  const g = await startWebdriver({
    redis: `embedded://${name}`,
    options: { ...options, proxy: { port }, api: { port: 0 }, heartbeat: { interval: 1, nodeTtl: 3, managerTtl: 3 }, orchestrator: { id: 'o1', slots: 1, ...(options.orchestrator as object) } },
  });
  grids.push(g);
  const backend = await createBackend({ url: `embedded://${name}` });
  t.teardown(() => backend.close());
  const codes = async (id: string) => ((await backend.send(['XRANGE', `session:${id}:log`, '-', '+'])) as [string, string[]][]).map(([, f]) => f[f.indexOf('code') + 1]!);
  const newest = async () => {
    const ids = [...((await backend.send(['SMEMBERS', 'sessions.active'])) as string[]), ...((await backend.send(['SMEMBERS', 'sessions.terminated'])) as string[])];
    const at = await Promise.all(ids.map((id) => backend.send(['HGET', `session:${id}:status`, 'queuedAt']) as Promise<string>));
    return ids[at.indexOf([...at].sort().at(-1)!)]!;
  };
  const slotFree = async () => {
    for (let i = 0; i < 100; i++) {
      if (((await backend.send(['LRANGE', 'orchestrator:o1:slots.available', 0, -1])) as string[]).join() === 'o1:1') return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  return { base: `http://127.0.0.1:${port}`, backend, codes, newest, slotFree };
}

t.test('STIMEOUT: a session idle for sessionTermination seconds is ended, its slot back', async (t) => {
  const g = await grid({ timeouts: { sessionTermination: 2 } });
  const created = await w3c(g.base, 'POST', '/session', newSessionBody());
  const id = created.body.value!.sessionId!;
  await new Promise((r) => setTimeout(r, 3500));
  t.same((await g.codes(id)).slice(-2), ['STIMEOUT', 'HALT']);
  t.equal((await w3c(g.base, 'GET', `/session/${id}/title`)).status, 404, 'the client gets invalid session id');
  t.ok(await g.slotFree(), 'the slot is back');
});

t.test('chromedrivers whose sessions were deleted cleanly serve the next sessions; a failed one is not reused', async (t) => {
  const g = await grid({});
  const driverPid = async (id: string) => {
    const dalive = ((await g.backend.send(['XRANGE', `session:${id}:log`, '-', '+'])) as [string, string[]][]).find(([, f]) => f.includes('DALIVE'))![1];
    return Number(/pid (\d+)/.exec(dalive[dalive.indexOf('meta') + 1]!)?.[1]);
  };
  const pids: number[] = [];
  let last = '';
  for (let i = 0; i < 4; i++) {
    last = (await w3c(g.base, 'POST', '/session', newSessionBody())).body.value!.sessionId!;
    pids.push(await driverPid(last));
    t.equal((await w3c(g.base, 'GET', `/session/${last}/title`)).status, 200, `session ${i + 1} works`);
    if (i < 3) t.equal((await w3c(g.base, 'DELETE', `/session/${last}`)).status, 200);
  }
  // the warm driver and the one started to replace it, handed back and forth: no third chromedriver
  t.equal(new Set(pids).size, 2, `four sessions, two chromedrivers (${pids.join(', ')})`);
  // the last session's chromedriver dies under it: the session fails, and that driver is not offered again
  process.kill(pids[3]!, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 1000));
  t.same((await g.codes(last)).slice(-2), ['DFAILURE', 'HALT']);
  const next = (await w3c(g.base, 'POST', '/session', newSessionBody())).body.value!.sessionId!;
  t.not(await driverPid(next), pids[3], 'the next session gets a live chromedriver');
  t.equal((await w3c(g.base, 'DELETE', `/session/${next}`)).status, 200);
});

t.test('DFAILURE: the driver killed mid-session ends it; the client gets invalid session id', async (t) => {
  const g = await grid({});
  const created = await w3c(g.base, 'POST', '/session', newSessionBody());
  const id = created.body.value!.sessionId!;
  const dalive = ((await g.backend.send(['XRANGE', `session:${id}:log`, '-', '+'])) as [string, string[]][]).find(([, f]) => f.includes('DALIVE'))![1];
  const driverPid = Number(/pid (\d+)/.exec(dalive[dalive.indexOf('meta') + 1]!)?.[1]);
  process.kill(driverPid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 1000));
  t.same((await g.codes(id)).slice(-2), ['DFAILURE', 'HALT']);
  t.equal((await w3c(g.base, 'GET', `/session/${id}/title`)).body.value?.error, 'invalid session id');
  t.ok(await g.slotFree());
});

t.test("DFAILURE: chromedriver's refusals reach the client as chromedriver gave them (status, error, message)", async (t) => {
  const g = await grid({});
  const refused = (chromeOptions: unknown) => w3c(g.base, 'POST', '/session', { capabilities: { alwaysMatch: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions } } });
  const binary = await refused({ binary: '/nonexistent/chrome' });
  t.equal(binary.status, 500);
  t.equal(binary.body.value?.error, 'session not created');
  t.equal(binary.body.value?.message, 'session not created\nfrom unknown error: no chrome binary at /nonexistent/chrome', "a bad binary keeps chromedriver's reason, word for word");
  t.ok((await g.codes(await g.newest())).includes('DFAILURE'));
  t.ok(await g.slotFree());
  const exclude = await refused({ excludeSwitches: 5 });
  t.equal(exclude.status, 400, "excludeSwitches: 5 gets chromedriver's 400");
  t.equal(exclude.body.value?.error, 'invalid argument');
  t.match(exclude.body.value?.message, /cannot parse excludeSwitches\nfrom invalid argument: must be a list/);
  const args = await refused({ args: '--not-a-list' });
  t.equal(args.status, 400, 'args that are not a list are not dropped: chromedriver refuses them');
  t.match(args.body.value?.message, /cannot parse args\nfrom invalid argument: must be a list/);
  t.ok(await g.slotFree(), 'and nothing stays held');
});

t.test('DTIMEOUT and STARTFAIL: a driver slower than driverStartup', async (t) => {
  const g = await grid({ timeouts: { driverStartup: 1 }, orchestrator: { driverBinary: slowDriver, warmDrivers: 0 } });
  const answer = await w3c(g.base, 'POST', '/session', newSessionBody());
  t.equal(answer.body.value?.error, 'session not created');
  t.match(answer.body.value?.message, /DTIMEOUT/);
  const codes = await g.codes(await g.newest());
  t.ok(codes.includes('DTIMEOUT') && codes.includes('STARTFAIL'), codes.join(' '));
  t.ok(await g.slotFree());
});

t.test('NTIMEOUT: a node slower than nodeStartup', async (t) => {
  const g = await grid({ timeouts: { nodeStartup: 1 }, orchestrator: { driverBinary: slowDriver, warmDrivers: 0 } });
  const answer = await w3c(g.base, 'POST', '/session', newSessionBody());
  t.equal(answer.body.value?.error, 'session not created');
  t.match(answer.body.value?.message, /did not become responsive within 1 s/);
  const id = await g.newest();
  t.ok((await g.codes(id)).includes('NTIMEOUT'));
  t.ok(await g.slotFree(), 'the slot is back once the late node sees its session gone');
});

t.test('OTIMEOUT: an orchestrator that never schedules', async (t) => {
  const g = await grid({ timeouts: { scheduling: 1 } });
  // a second orchestrator, registered but not running: it gets the slot and never takes its backlog
  const ctx = scenarioContext({ plugin, backend: g.backend, keyPrefix: '', signal: new AbortController().signal }) as Ctx;
  const held = await w3c(g.base, 'POST', '/session', newSessionBody()); // o1's only slot
  await registerOrchestrator(ctx, { orchestratorId: 'ghost', type: 'local', platformName: 'linux', browsers: ['chrome::156.0.8078.108'], slots: 1 });
  const answer = await w3c(g.base, 'POST', '/session', newSessionBody());
  t.equal(answer.body.value?.error, 'session not created');
  t.match(answer.body.value?.message, /did not schedule the node within 1 s/);
  t.same(await g.codes(await g.newest()), ['QUEUED', 'NALLOC', 'OTIMEOUT']);
  t.same(await g.backend.send(['LRANGE', 'orchestrator:ghost:slots.reclaimed', 0, -1]), ['ghost:1'], 'its slot went back');
  await w3c(g.base, 'DELETE', `/session/${held.body.value!.sessionId}`);
});

t.test('CLEFT: a client that leaves while queued holds nothing', async (t) => {
  const g = await grid({});
  const held = await w3c(g.base, 'POST', '/session', newSessionBody());
  const leaving = new AbortController();
  const request = fetch(`${g.base}/session`, { method: 'POST', body: JSON.stringify(newSessionBody()), signal: leaving.signal }).catch(() => 'left');
  await new Promise((r) => setTimeout(r, 500));
  leaving.abort();
  t.equal(await request, 'left');
  await new Promise((r) => setTimeout(r, 500));
  const id = await g.newest();
  t.same(await g.codes(id), ['QUEUED', 'CLEFT']);
  t.equal(await g.backend.send(['SISMEMBER', 'sessions.terminated', id]), 1);
  await w3c(g.base, 'DELETE', `/session/${held.body.value!.sessionId}`);
  t.ok(await g.slotFree(), 'the one slot is free, not taken by the client that left');
  await new Promise((r) => setTimeout(r, 500));
  t.same(await g.backend.send(['LRANGE', 'orchestrator:o1:slots.available', 0, -1]), ['o1:1']);
});
