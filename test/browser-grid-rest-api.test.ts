// playwright-distributed's REST API (read side) served by the proxy:
// GET /v1/sessions, /v1/capacity, /v1/workers, read during live sessions of a
// real Playwright client (worker and proxy in their own processes, real Redis
// and Chromium), with and without the token; and the KEDA example that scales
// worker pods on those fields.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chromium, firefox, webkit, type Browser } from 'playwright-core';
import { parse, parseAllDocuments } from 'yaml';
import { root } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const bundled = (await import('playwright-core/package.json', { with: { type: 'json' } })).default.version;
const rig = await startPageRig(t, 'browser-grid');
const prefix = '{rest}:';
const token = 'rest-secret';
const port = await freePort();
const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'cdp=false', 'workers=1', 'maxConcurrentSessions=2', 'queueSize=7', `token=${token}`];
const worker = rig.run('worker', { prefix, sets });
const proxy = rig.run('proxy', { prefix, sets: [...sets, `port=${port}`] });
await ready(worker, proxy);
const proxyId = String((await proxy.waitFor((l) => String(l.msg).startsWith('proxy listening'))).proxyId);

const base = `http://127.0.0.1:${port}`;
const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(base + path, { headers });
  return { status: res.status, body: (await res.json()) as any };
};
const authed = (path: string) => get(path, { authorization: `Bearer ${token}` });
const client = () => chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium&token=${token}`, { timeout: 60_000 });
const recent = (iso: unknown) => typeof iso === 'string' && Math.abs(Date.now() - Date.parse(iso)) < 120_000;

t.test('errors are RFC 9457 problems, as playwright-distributed sends: without the token 401, an unknown resource 404, a method other than GET 405', async (t) => {
  const problem = async (res: Response, status: number, detail: RegExp) => {
    t.equal(res.status, status, `${res.url.replace(base, '')}: ${status}`);
    t.equal(res.headers.get('content-type'), 'application/problem+json');
    const body = (await res.json()) as Record<string, unknown>;
    t.match(body, { type: 'about:blank', title: String, status, detail });
    return body;
  };
  for (const path of ['/v1/sessions', '/v1/capacity', '/v1/workers']) {
    const body = await problem(await fetch(base + path), 401, /^missing or wrong token$/);
    t.equal(body.instance, path, 'instance names the path');
    await problem(await fetch(`${base}${path}?token=wrong`), 401, /token/);
  }
  await problem(await fetch(`${base}/v1/nope?token=${token}`), 404, /no such resource \/v1\/nope: the API serves \/v1\/sessions, \/v1\/capacity, \/v1\/workers/);
  await problem(await fetch(`${base}/v1/nope`), 401, /token/); // no hint of what exists without the token
  const post = await fetch(`${base}/v1/capacity?token=${token}`, { method: 'DELETE' });
  t.equal(post.headers.get('allow'), 'GET, HEAD');
  await problem(post, 405, /^DELETE \/v1\/capacity: only GET is served$/);
  t.same(await get('/status'), { status: 401, body: { error: { code: 401, message: 'missing or wrong token' } } }, '/status keeps its own error body');
});

t.test('probes: /healthz and /readyz answer without the token', async (t) => {
  t.same(await get('/healthz'), { status: 200, body: { status: 'ok' } });
  t.same(await get('/readyz'), { status: 200, body: { status: 'ready', redis: 'reachable' } });
});

t.test('a client asking for firefox or webkit, which no worker serves: a 503 naming what is served and what that browser needs', async (t) => {
  for (const [type, launcher, build] of [['firefox', firefox, 'Firefox'], ['webkit', webkit, 'WebKit']] as const) {
    const at = Date.now();
    const error = await launcher.connect(`ws://127.0.0.1:${port}/?browser=${type}&token=${token}`, { timeout: 30_000 }).then(
      (b) => b.close().then(() => 'connected'),
      (e: Error) => e.message,
    );
    t.match(error, new RegExp(`503 Service Unavailable.*no ${type} worker is registered in the grid\\. It serves chromium \\(1 worker\\)\\..*browser-grid\\.browserTypes including ${type}.*Playwright's own ${build} build \\(npx playwright install ${type}\\)`, 's'), `${type}: ${error.split('\n')[0]}`);
    t.ok(Date.now() - at < 10_000, `${type}: answered at once, not queued (${Date.now() - at} ms)`);
  }
  const capacity = (await authed('/v1/capacity')).body;
  t.same(capacity.browsers.map((b: { browser: string; workers: number }) => [b.browser, b.workers]), [['chromium', 1], ['firefox', 0], ['webkit', 0]], '/v1/capacity per browser');
});

t.test('during two live sessions and one queued client, with the token (bearer or ?token=)', async (t) => {
  const browsers: Browser[] = [await client(), await client()];
  const pages = await Promise.all(browsers.map(async (b) => (await b.newPage()).goto(rig.page.url)));
  t.equal(pages.length, 2);
  const waiting = client(); // both slots taken: it queues
  t.teardown(async () => {
    for (const b of browsers) await b.close().catch(() => {});
    await waiting.then((b) => b.close()).catch(() => {});
  });
  await until('the third client waits in the queue', async () => (await authed('/v1/capacity')).body.queued === 1, 30_000);

  const workers = await get(`/v1/workers?token=${token}`);
  t.equal(workers.status, 200);
  t.equal(workers.body.length, 1, 'one worker');
  const w = workers.body[0];
  t.match(w, { browser: 'chromium', playwright_version: bundled, max_slots: 2, status: 'available', active_sessions: 2 });
  t.match(w.id, /^[0-9a-f-]{36}$/, 'id: the worker id');
  t.match(w.address, /^ws:\/\/127\.0\.0\.1:\d+\//, 'address: the browser server it is dialed at');
  t.ok(w.lifetime_sessions >= 2, `lifetime_sessions ${w.lifetime_sessions}`);
  t.ok(recent(w.last_heartbeat) && recent(w.created_at), 'last_heartbeat and created_at are recent ISO times');

  const capacity = await authed('/v1/capacity');
  t.equal(capacity.status, 200);
  t.same(capacity.body.totals, { workers: 1, max_slots: 2, active_sessions: 2, available_slots: 0 }, 'totals');
  t.same(capacity.body.browsers.find((b: { browser: string }) => b.browser === 'chromium'), { browser: 'chromium', workers: 1, max_slots: 2, active_sessions: 2, available_slots: 0, queued: 1 });
  t.match(capacity.body, { queued: 1, queued_here: 1, max_queue_size: 7 });

  const sessions = await authed('/v1/sessions');
  t.equal(sessions.status, 200);
  t.equal(sessions.body.length, 2, 'the two relayed sessions (the queued client has none yet)');
  for (const s of sessions.body) {
    t.match(s, { worker_id: w.id, browser: 'chromium', playwright_version: bundled, worker_address: w.address, mode: 'default', status: 'running', connect_metadata: {}, proxy_id: proxyId });
    t.ok(recent(s.created_at) && s.started_at === s.created_at && recent(s.last_heartbeat), 'times are recent ISO times');
  }
  t.not(sessions.body[0].id, sessions.body[1].id, 'each session has its own id');

  // the first client leaves: the queued one is served, the API follows
  await browsers.shift()!.close();
  browsers.push(await waiting);
  await until('the queue is empty and two sessions run', async () => {
    const c = (await authed('/v1/capacity')).body;
    return c.queued === 0 && c.totals.active_sessions === 2;
  }, 30_000);
  const after = (await authed('/v1/sessions')).body as { id: string }[];
  t.equal(after.length, 2);
  t.equal(after.filter((s) => sessions.body.some((x: { id: string }) => x.id === s.id)).length, 1, 'one of the first two sessions remains, the other is new');
  for (const b of browsers.splice(0)) await b.close();
  await until('no session once the clients left', async () => (await authed('/v1/sessions')).body.length === 0, 30_000);
  t.match((await authed('/v1/capacity')).body.totals, { active_sessions: 0, available_slots: 2 });
});

t.test('the KEDA example: kustomize builds it, it scales the worker Deployment on fields /v1/capacity has, with the proxies\' token', async (t) => {
  const r = spawnSync('kubectl', ['kustomize', join(root, 'examples/deploy/kubernetes-autoscaling')], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS());
  const scaled = docs.find((d) => d.kind === 'ScaledObject');
  t.ok(docs.some((d) => d.kind === 'Deployment' && d.metadata.name === scaled.spec.scaleTargetRef.name && d.metadata.name === 'coord-worker'), 'it scales the worker Deployment');
  const service = docs.find((d) => d.kind === 'Service' && d.metadata.name === 'coord-proxy');
  const capacity = (await authed('/v1/capacity')).body;
  const locations: string[] = [];
  for (const trigger of scaled.spec.triggers) {
    t.equal(trigger.type, 'metrics-api');
    const url = new URL(trigger.metadata.url);
    t.equal(url.hostname, `${service.metadata.name}.${service.metadata.namespace}.svc`, 'it asks the proxies\' Service');
    t.equal(Number(url.port), service.spec.ports[0].port);
    t.equal(url.pathname, '/v1/capacity');
    t.equal(trigger.metadata.authMode, 'bearer');
    const value = String(trigger.metadata.valueLocation).split('.').reduce((o: any, k) => o?.[k], capacity);
    t.equal(typeof value, 'number', `${trigger.metadata.valueLocation} is a number in /v1/capacity`);
    locations.push(trigger.metadata.valueLocation);
    const auth = docs.find((d) => d.kind === 'TriggerAuthentication' && d.metadata.name === trigger.authenticationRef.name);
    t.same(auth.spec.secretTargetRef.map((s: { parameter: string }) => s.parameter), ['token'], 'KEDA sends the token as a bearer token');
    t.ok(docs.some((d) => d.kind === 'Secret' && d.metadata.name === auth.spec.secretTargetRef[0].name), 'from a Secret of the example');
  }
  t.same(locations.sort(), ['queued', 'totals.active_sessions'], 'queue length and capacity');
  const proxyPod = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'coord-proxy').spec.template.spec;
  const container = proxyPod.containers[0];
  t.ok(container.args.includes('browser-grid.token=$(GRID_TOKEN)'), 'the proxies require the token');
  t.equal(container.env.find((e: { name: string }) => e.name === 'GRID_TOKEN').valueFrom.secretKeyRef.name, 'coord-grid-token', 'the same Secret');
  t.same(container.readinessProbe.tcpSocket, { port: 'grid' }, 'readiness does not need the token');
  t.equal(parse(readFileSync(join(root, 'examples/deploy/kubernetes/coord/worker.yaml'), 'utf8')).plugins['browser-grid'].workers, 2, 'the 10 slots per pod the comments count on: 2 servers × 5 sessions');
});
