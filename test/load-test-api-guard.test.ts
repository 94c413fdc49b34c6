// The orchestrator's API against a browser on the same machine: a page of
// another origin (Origin: http://evil.example) and a DNS-rebinding name
// (Host: attacker-rebind.example) are refused with 403 and start nothing; a
// POST that is not JSON is refused; a start may only load a scenario inside
// load-test.scenarioDir (or load-test.scenario). Configured hosts and origins
// are let in. Real HTTP on loopback, an in-process orchestrator and worker.
import t from 'tap';
import { copyFileSync, mkdtempSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { root } from './support/cli.ts';
import { startLoad, startTarget } from './support/load.ts';
import { until } from './support/until.ts';
import { freePort } from './support/redis.ts';

const target = await startTarget();
const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'coord-guard-'));
copyFileSync(resolve(root, 'test/fixtures/load-test/paced.mjs'), join(dir, 'paced.mjs'));
const outside = mkdtempSync(join(tmpdir(), 'coord-outside-'));
copyFileSync(resolve(root, 'test/fixtures/load-test/paced.mjs'), join(outside, 'evil.mjs'));
symlinkSync(join(outside, 'evil.mjs'), join(dir, 'link.mjs'));
const load = await startLoad({
  roles: [],
  options: { api: true, port, scenarioDir: dir, allowedHosts: ['grid.internal'], allowedOrigins: ['http://dash.example'], metricsInterval: 0.3, gracefulStop: 1 },
});
t.teardown(async () => {
  await load.handle.stop('test done');
  await target.close();
});

/** A raw request (fetch may not set Host). */
function call(method: string, path: string, opts: { host?: string; origin?: string; type?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const text = opts.body === undefined ? '' : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const headers: Record<string, string> = { host: opts.host ?? `127.0.0.1:${port}` };
  if (opts.origin) headers.origin = opts.origin;
  if (method === 'POST') headers['content-type'] = opts.type ?? 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: res.headers['content-type'] === 'application/json' ? JSON.parse(data) : data }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const start = { scenario: 'paced.mjs', users: 2, spawnRate: 100, params: { baseUrl: target.url } };
const state = async () => (await call('GET', '/api/status')).body.state as string;
const served = async () => (await target.stats()).total;

t.test('a cross-origin start is refused (403) and nothing starts', async (t) => {
  const before = await served();
  const r = await call('POST', '/api/start', { origin: 'http://evil.example', body: start });
  t.equal(r.status, 403);
  t.match(r.body.error, /^Origin "http:\/\/evil\.example" is not allowed/);
  t.equal((await call('POST', '/api/stop', { origin: 'http://evil.example' })).status, 403, 'nor may it stop a test');
  t.equal((await call('POST', '/api/start', { origin: 'null', body: start })).status, 403, "Origin: null (a sandboxed page) too");
  t.equal((await call('POST', '/api/start', { origin: `http://127.0.0.1:${port + 1}`, body: start })).status, 403, 'another port of loopback is another origin');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await state(), 'IDLE', 'no test started');
  t.equal(await served(), before, 'no request reached the target');
});

t.test('a DNS-rebinding Host is refused (403), reads included', async (t) => {
  for (const [method, path] of [['GET', '/'], ['GET', '/api/status'], ['POST', '/api/start']] as const) {
    const r = await call(method, path, { host: `attacker-rebind.example:${port}`, body: method === 'POST' ? start : undefined });
    t.equal(r.status, 403, `${method} ${path}`);
  }
  const r = await call('POST', '/api/start', { host: `attacker-rebind.example:${port}`, origin: `http://attacker-rebind.example:${port}`, body: start });
  t.equal(r.status, 403, 'with its own matching Origin too');
  t.match(r.body.error, /^Host "attacker-rebind\.example:\d+" is not allowed: the API answers localhost, 127\.0\.0\.1, ::1, grid\.internal/);
  t.equal(await state(), 'IDLE');
});

t.test('a POST that does not say it is JSON is refused', async (t) => {
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const r = await call('POST', '/api/start', { type, body: JSON.stringify(start) });
    t.equal(r.status, 403, type);
    t.match(r.body.error, /a POST must send Content-Type: application\/json/);
  }
  t.equal(await state(), 'IDLE');
});

t.test('a scenario outside the allowed folder is refused', async (t) => {
  for (const scenario of ['/etc/passwd', join(outside, 'evil.mjs'), '../' + join(outside, 'evil.mjs').split('/').slice(-2).join('/'), 'link.mjs', resolve(root, 'test/fixtures/load-test/paced.mjs')]) {
    const r = await call('POST', '/api/start', { body: { ...start, scenario } });
    t.equal(r.status, 400, scenario);
    t.match(r.body.error, /^scenario ".*" is not allowed: the API starts scenario modules \(\.ts, \.js, \.mjs\) inside /);
  }
  t.equal(await state(), 'IDLE');
});

t.test('its own page, configured hosts and origins, and scenarios in the folder are served', async (t) => {
  t.equal((await call('GET', '/', { host: `localhost:${port}` })).status, 200, 'the page by localhost');
  t.equal((await call('GET', '/api/status', { host: `grid.internal:${port}` })).status, 200, 'a host of allowedHosts');
  const before = await served();
  const r = await call('POST', '/api/start', { origin: `http://127.0.0.1:${port}`, type: 'application/json; charset=utf-8', body: start });
  t.equal(r.status, 202, 'a start from its own page (same origin), by a relative name inside scenarioDir');
  await until('requests at the target', async () => (await served()) > before, 10_000);
  t.equal((await call('POST', '/api/stop', { origin: 'http://dash.example' })).status, 200, 'an origin of allowedOrigins may stop it');
  t.equal(await state(), 'IDLE');
});
