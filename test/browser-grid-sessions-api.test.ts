// playwright-distributed's session control plane, with its field names and
// status codes: POST /v1/sessions takes a slot (201 with the Session, 429 when
// the queue is full, 400 problems for a wrong body), a real Playwright client
// attaches over ws://…/sessions/{id} at another proxy, GET follows its status
// (pending, running, completed, expired), and DELETE at the first proxy closes
// the relay at the second within one heartbeat. Two proxies and a worker in
// their own processes, real Redis and Chromium.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { chromium } from 'playwright-core';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const bundled = (await import('playwright-core/package.json', { with: { type: 'json' } })).default.version;
const majorMinor = bundled.split('.').slice(0, 2).join('.');
const rig = await startPageRig(t, 'browser-grid');
const prefix = '{sessions}:';
const token = 'sessions-secret';
const KEEP_ALIVE_S = 8;
const HEARTBEAT_S = 1;
const sets = [`heartbeatInterval=${HEARTBEAT_S}`, 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'cdp=false', 'workers=1', 'maxConcurrentSessions=2', 'queueSize=1', 'queueTimeout=60', `sessionKeepAlive=${KEEP_ALIVE_S}`, `token=${token}`];
const [portA, portB] = [await freePort(), await freePort()];
const worker = rig.run('worker', { prefix, sets });
const proxyA = rig.run('proxy', { prefix, sets: [...sets, `port=${portA}`] });
const proxyB = rig.run('proxy', { prefix, sets: [...sets, `port=${portB}`] });
await ready(worker, proxyA, proxyB);
const proxyIdOf = async (p: typeof proxyA) => String((await p.waitFor((l) => String(l.msg).startsWith('proxy listening'))).proxyId);
const [idA, idB] = [await proxyIdOf(proxyA), await proxyIdOf(proxyB)];

const at = (port: number) => `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${token}` };
async function call(port: number, method: string, path: string, body?: unknown) {
  const res = await fetch(at(port) + path, { method, headers: { ...auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), location: res.headers.get('location'), body: text ? (JSON.parse(text) as any) : undefined };
}
const create = (port: number, body: unknown = { browser: 'chromium' }) => call(port, 'POST', '/v1/sessions', body);
const active = async () => (await call(portA, 'GET', '/v1/capacity')).body.totals.active_sessions as number;
const iso = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));

t.test('a wrong body or no token: one RFC 9457 problem naming the field and what was expected', async (t) => {
  const noToken = await fetch(`${at(portA)}/v1/sessions`, { method: 'POST', body: '{}' });
  t.equal(noToken.status, 401);
  const cases: [unknown, RegExp][] = [
    ['{"browser":', /^the body is not JSON \(.*\); expected e\.g\. \{"browser":"chromium"\}$/],
    [[1], /^the body must be a JSON object/],
    [{ browser: 'opera' }, /^browser "opera": expected one of chromium, firefox, webkit$/],
    [{ browsr: 'chromium' }, /^unknown field "browsr"; expected browser, playwright_version, mode, connect_metadata$/],
    [{ playwright_version: 'latest' }, /^playwright_version "latest": expected a version such as "1\.62"/],
    [{ mode: 'dedicated' }, /^mode "dedicated" \(a worker to itself\) is not served: .*use mode "default"$/],
    [{ mode: 'shared' }, /^mode "shared": expected "default"$/],
    [{ connect_metadata: ['a'] }, /^connect_metadata must be a JSON object$/],
  ];
  for (const [body, detail] of cases) {
    const r = await create(portA, body);
    t.equal(r.status, 400, `${JSON.stringify(body)}: 400`);
    t.equal(r.type, 'application/problem+json');
    t.match(r.body, { type: 'about:blank', title: 'Bad Request', status: 400, detail, instance: '/v1/sessions' }, r.body?.detail);
  }
  const unserved = await create(portA, { browser: 'chromium', playwright_version: '1.10' });
  t.match(unserved, { status: 422, body: { title: 'Unprocessable Content', detail: `playwright_version 1.10 is not served by this grid: its chromium workers speak Playwright ${majorMinor}` } }, 'a version no worker speaks: 422 naming the served ones');
  for (const [method, path, status] of [['GET', `/v1/sessions/${randomUUID()}`, 404], ['DELETE', `/v1/sessions/${randomUUID()}`, 404], ['GET', '/v1/sessions/not-a-uuid', 404], ['PUT', '/v1/sessions', 405]] as const) {
    const r = await call(portA, method, path);
    t.equal(r.status, status, `${method} ${path}: ${status} (${r.body?.detail})`);
    t.equal(r.type, 'application/problem+json');
  }
  t.equal(await active(), 0, 'no slot was taken by any of them');
});

t.test('POST → 201 pending at one proxy, attached at the other, running, then DELETE at the first closes the relay within a heartbeat', async (t) => {
  const metadata = { build: '42', suite: 'checkout' };
  const created = await create(portA, { browser: 'chromium', playwright_version: bundled, connect_metadata: metadata });
  t.equal(created.status, 201);
  const s = created.body;
  t.match(s.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'id: a UUID');
  t.equal(created.location, `/v1/sessions/${s.id}`);
  t.match(s, { browser: 'chromium', playwright_version: majorMinor, mode: 'default', status: 'pending', connect_metadata: metadata, keep_alive_ms: KEEP_ALIVE_S * 1000, started_at: null, proxy_id: idA });
  t.match(s.worker_id, /^[0-9a-f-]{36}$/);
  t.match(s.worker_address, /^ws:\/\/127\.0\.0\.1:\d+\/…$/, 'worker_address without the worker\'s secret path');
  t.ok(iso(s.created_at) && iso(s.expires_at), 'created_at and expires_at are ISO times');
  t.equal(Date.parse(s.expires_at) - Date.parse(s.created_at), KEEP_ALIVE_S * 1000, 'it expires keep_alive_ms after its creation');
  t.equal(s.connect_url, `ws://127.0.0.1:${portA}/sessions/${s.id}`);
  t.equal(await active(), 1, 'it holds a slot before its client connects');
  const listed = (await call(portB, 'GET', '/v1/sessions')).body;
  t.match(listed, [{ id: s.id, status: 'pending', connect_metadata: metadata }], 'GET /v1/sessions lists it, at any proxy');
  t.match((await call(portB, 'GET', `/v1/sessions/${s.id}`)).body, { id: s.id, status: 'pending' }, 'the other proxy reads it too');

  const browser = await chromium.connect(`ws://127.0.0.1:${portB}/sessions/${s.id}?token=${token}`, { timeout: 60_000 });
  const page = await browser.newPage();
  await page.goto(`${rig.page.url}/attached`);
  t.equal(await page.title(), 'coord /attached', 'the attached client drives a real page');
  const running = (await call(portA, 'GET', `/v1/sessions/${s.id}`)).body;
  t.match(running, { status: 'running', proxy_id: idB });
  t.ok(iso(running.started_at), 'started_at set');
  t.equal(await active(), 1, 'still one slot: the pending one became the running one');
  const second = await chromium.connect(`ws://127.0.0.1:${portA}/sessions/${s.id}?token=${token}`, { timeout: 30_000 }).then((b) => (b.close(), 'connected'), (e: Error) => e.message);
  t.match(second, /409 Conflict.*has a client already: a session takes one client/s, 'a second client of the same session: 409');

  const disconnected = new Promise<number>((resolve) => browser.once('disconnected', () => resolve(Date.now())));
  const deletedAt = Date.now();
  const deleted = await call(portA, 'DELETE', `/v1/sessions/${s.id}`);
  t.equal(deleted.status, 204);
  const closedAfter = (await disconnected) - deletedAt;
  // the relaying proxy looks at each heartbeat; a loaded machine may start a beat late
  t.ok(closedAfter <= HEARTBEAT_S * 1000 + 4000, `the client at the other proxy was disconnected ${closedAfter} ms after the DELETE (one heartbeat: ${HEARTBEAT_S * 1000} ms)`);
  const ended = (await call(portB, 'GET', `/v1/sessions/${s.id}`)).body;
  t.match(ended, { status: 'completed', end_reason: /^deleted/ });
  t.ok(iso(ended.ended_at), 'ended_at set');
  await until('its slot given back', async () => (await active()) === 0, 30_000);
  t.equal((await call(portA, 'DELETE', `/v1/sessions/${s.id}`)).status, 204, 'a second DELETE changes nothing');
  const again = await chromium.connect(`ws://127.0.0.1:${portA}/sessions/${s.id}?token=${token}`, { timeout: 30_000 }).then((b) => (b.close(), 'connected'), (e: Error) => e.message);
  t.match(again, /410 Gone.*is completed/s, 'an ended session cannot be attached');
});

t.test('a client that closes its browser completes its session', async (t) => {
  const s = (await create(portB)).body;
  const browser = await chromium.connect(s.connect_url.replace(/$/, `?token=${token}`), { timeout: 60_000 });
  await (await browser.newPage()).goto(rig.page.url);
  await browser.close();
  await until('completed', async () => (await call(portA, 'GET', `/v1/sessions/${s.id}`)).body.status === 'completed', 30_000);
  t.match((await call(portA, 'GET', `/v1/sessions/${s.id}`)).body, { status: 'completed', end_reason: 'the connection closed', proxy_id: idB });
  await until('its slot given back', async () => (await active()) === 0, 30_000);
});

t.test('no client within keep_alive_ms: expired, its slot given back, and it cannot be attached', async (t) => {
  const s = (await create(portA)).body;
  t.equal(await active(), 1);
  await until('expired', async () => (await call(portB, 'GET', `/v1/sessions/${s.id}`)).body.status === 'expired', (KEEP_ALIVE_S + 20) * 1000, 200);
  await until('its slot given back', async () => (await active()) === 0, 30_000);
  const late = await chromium.connect(`ws://127.0.0.1:${portB}/sessions/${s.id}?token=${token}`, { timeout: 30_000 }).then((b) => (b.close(), 'connected'), (e: Error) => e.message);
  t.match(late, /410 Gone.*expired: no client attached within its keep_alive_ms/s);
});

t.test('full: pending sessions hold both slots, the next POST waits in the queue, one more gets 429; a DELETE lets the waiting one in', async (t) => {
  const first = (await create(portA)).body;
  const second = (await create(portB)).body;
  t.equal(await active(), 2);
  const waiting = create(portA);
  await until('the third waits in the queue', async () => (await call(portA, 'GET', '/v1/capacity')).body.queued === 1, 30_000);
  const full = await create(portB);
  t.equal(full.status, 429, 'the queue (queueSize=1) is full: 429');
  t.match(full.body, { status: 429, title: 'Too Many Requests', detail: /all chromium workers are busy and 1 clients are already waiting/ });
  t.equal((await call(portB, 'DELETE', `/v1/sessions/${first.id}`)).status, 204, 'a pending session deleted at the proxy that did not create it');
  const third = await waiting;
  t.equal(third.status, 201, 'the waiting one got the slot given back');
  t.match((await call(portA, 'GET', `/v1/sessions/${first.id}`)).body, { status: 'completed' });
  for (const id of [second.id, third.body.id]) t.equal((await call(portA, 'DELETE', `/v1/sessions/${id}`)).status, 204);
  await until('every slot given back', async () => (await active()) === 0, 30_000);
});
