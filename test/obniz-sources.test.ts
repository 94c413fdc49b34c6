// Device sources against local servers: an HTTP URL (JSON, YAML, errors), a
// user function, the obniz Cloud API (a fake GraphQL server: pages, the rate
// limit, 429 with Retry-After, 500s, a refused token), and the webhook.
import t from 'tap';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createBackend } from '../adapters/index.ts';
import { systemClock } from '../core/clock.ts';
import { memoryLogger } from '../core/logger.ts';
import type { ObnizConfig } from '../plugins/obniz/config.ts';
import { deviceSource } from '../plugins/obniz/sources/source.ts';
import { pluginConfig } from '../conformance/scenario-context.ts';
import plugin from '../plugins/obniz/index.ts';
import { fixtures, recordEvents, startManager, startSlave } from './support/obniz.ts';
import { until } from './support/until.ts';
import { freePort, startRedis } from './support/redis.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

async function serve(handler: Handler): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

const configOf = (values: Record<string, unknown>) => pluginConfig(plugin, values) as unknown as ObnizConfig;
const sourceOf = (values: Record<string, unknown>, lines = memoryLogger()) => deviceSource({ config: configOf(values), logger: lines, clock: systemClock })!;

t.test('URL source: JSON and YAML bodies, headers sent, HTTP errors and bad lists are one line', async (t) => {
  let body = '[{"id":"u-1"},"u-2"]';
  let status = 200;
  let auth: string | undefined;
  const server = await serve((req, res, _b) => {
    auth = req.headers.authorization;
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  t.teardown(server.close);
  const source = sourceOf({ devices: `${server.url}/devices.json`, devicesHeaders: { authorization: 'Bearer s3cret' } });
  t.same(await source.list(), [{ id: 'u-1', hardware: 'unknown', configs: '{}' }, { id: 'u-2', hardware: 'unknown', configs: '{}' }], 'as the SDK\'s DeviceInfo: a hardware, configs a JSON string');
  t.equal(auth, 'Bearer s3cret');
  body = 'devices:\n  - id: y-1\n    configs: {a: 1}\n';
  t.same(await source.list(), [{ id: 'y-1', configs: '{"a":1}', hardware: 'unknown' }], 'YAML, {devices: [...]}: configs encoded as JSON text');
  status = 503;
  await t.rejects(source.list(), { message: `devices URL ${server.url}/devices.json: HTTP 503 Service Unavailable` });
  status = 200;
  body = '[{"name": "no id"}]';
  await t.rejects(source.list(), { message: `devices URL ${server.url}/devices.json: [0].id: expected an obniz id (NNNN-NNNN) or an id of 1 to 64 letters, digits, '.', '_' or '-', got nothing` });
  const closed = await freePort();
  await t.rejects(sourceOf({ devices: `http://127.0.0.1:${closed}/x.json` }).list(), { message: `devices URL http://127.0.0.1:${closed}/x.json: cannot fetch: ECONNREFUSED` });
});

t.test('module source: the default export is called at every sync; its errors are one line', async (t) => {
  const source = sourceOf({ devices: join(fixtures, 'list-devices.mjs') });
  process.env.OBNIZ_TEST_DEVICE_COUNT = '3';
  t.same((await source.list()).map((d) => d.id), ['fn-0', 'fn-1', 'fn-2']);
  t.same((await source.list())[0], { id: 'fn-0', configs: '{"from":"function"}', hardware: 'unknown' }, 'the SDK\'s DeviceInfo shape from a function too');
  process.env.OBNIZ_TEST_DEVICE_COUNT = '1';
  t.same((await source.list()).map((d) => d.id), ['fn-0']);
  process.env.OBNIZ_TEST_DEVICE_COUNT = '-1';
  await t.rejects(source.list(), { message: /^device list module .*list-devices\.mjs: the function threw: the inventory service is down$/ });
  delete process.env.OBNIZ_TEST_DEVICE_COUNT;
  await t.rejects(sourceOf({ devices: join(fixtures, 'no-default-worker.mjs') }).list(), { message: /its default export is not a function/ });
});

t.test('obniz Cloud source: every page, the app token, at most cloudRateLimit requests per second, retries on 429 and 5xx', async (t) => {
  const installs = Array.from({ length: 23 }, (_, i) => ({ id: `${String(i).padStart(4, '0')}-0001`, hardware: 'obnizb2', configs: '{"interval":5}', user: { id: 'u1' } }));
  const requests: { at: number; skip: number; first: number; auth?: string }[] = [];
  const failures = ['429', '500'];
  const server = await serve((req, res, body) => {
    const { variables, query } = JSON.parse(body) as { query: string; variables: { skip: number; first: number } };
    requests.push({ at: Date.now(), skip: variables.skip, first: variables.first, auth: req.headers.authorization });
    if (req.url !== '/v1/graphql' || !/installs\(first: \$first, skip: \$skip\)/.test(query)) return void res.writeHead(404).end();
    if (req.headers.authorization !== 'Bearer good-token') return void res.writeHead(401).end();
    const failure = variables.skip === 10 ? failures.shift() : undefined;
    if (failure === '429') return void res.writeHead(429, { 'retry-after': '1' }).end();
    if (failure === '500') return void res.writeHead(500).end();
    const page = installs.slice(variables.skip, variables.skip + variables.first);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      data: { app: { id: 'app1', installs: { totalCount: installs.length, pageInfo: { hasNextPage: variables.skip + page.length < installs.length }, edges: page.map((node) => ({ node })) } } },
    }));
  });
  t.teardown(server.close);
  const logs = memoryLogger();
  const source = sourceOf({ appToken: 'good-token', cloudApiUrl: server.url, cloudPageSize: 5, cloudRateLimit: 20 }, logs);
  const started = Date.now();
  const list = await source.list();
  t.same(list, installs, 'all 23 installs, in order, as the API gave them');
  t.same(requests.map((r) => r.skip), [0, 5, 10, 10, 10, 15, 20], 'five pages; the third retried after a 429 and a 500');
  t.ok(requests.every((r) => r.first === 5 && r.auth === 'Bearer good-token'));
  const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
  t.ok(gaps[2]! >= 950, `Retry-After: 1 honoured (${gaps[2]} ms)`);
  t.equal(logs.lines.filter((l) => l.level === 'warn').length, 2, 'each retry is one warning');
  t.ok(Date.now() - started < 10_000);
  await t.rejects(sourceOf({ appToken: 'bad-token', cloudApiUrl: server.url }).list(), { message: 'obniz Cloud API: HTTP 401: the app token was refused' });
});

t.test('obniz Cloud source: at most cloudRateLimit requests in any second', async (t) => {
  const at: number[] = [];
  const server = await serve((_req, res, body) => {
    const { variables } = JSON.parse(body) as { variables: { skip: number } };
    at.push(Date.now());
    const more = variables.skip < 24;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      data: { app: { installs: { pageInfo: { hasNextPage: more }, edges: [{ node: { id: `r-${variables.skip}` } }] } } },
    }));
  });
  t.teardown(server.close);
  const list = await sourceOf({ appToken: 'good-token', cloudApiUrl: server.url, cloudPageSize: 1, cloudRateLimit: 10 }).list();
  t.equal(list.length, 25, '25 pages of one');
  t.same(list[0], { id: 'r-0', hardware: 'unknown', configs: '{}' }, 'an install with no configs or hardware gets the SDK\'s shape');
  const busiest = Math.max(...at.map((start) => at.filter((x) => x >= start && x < start + 1000).length));
  // requests leave 100 ms apart; their arrival may jitter a little, never by a whole slot twice
  t.ok(busiest <= 11, `at most 10 (+1 for arrival jitter) requests in any 1 s window: ${busiest}`);
  t.ok(at.at(-1)! - at[0]! >= 24 * 100 * 0.9, `25 requests took ${at.at(-1)! - at[0]!} ms (≥ 2.4 s at 10/s)`);
});

t.test('webhook: bound to 127.0.0.1, a token, GET/POST re-read the list; with no list, install events apply directly', async (t) => {
  const redis = await startRedis();
  const backend = await createBackend({ url: redis.url });
  const events = recordEvents();
  const slave = await startSlave(backend, '{hook}:', 's1');
  let count = 1;
  const server = await serve((_req, res) => res.writeHead(200).end(JSON.stringify(Array.from({ length: count }, (_, i) => ({ id: `w-${i}` })))));
  const manager = await startManager(backend, '{hook}:', 'm1', { devices: `${server.url}/list`, webhook: true, webhookPort: 0, webhookToken: 'hook-secret' });
  const direct = await startManager(backend, '{hook2}:', 'm2', { deviceSource: 'none', webhook: true, webhookPort: 0 });
  const slave2 = await startSlave(backend, '{hook2}:', 's2');
  t.teardown(async () => {
    await manager.stop();
    await direct.stop();
    await slave.stop('done');
    await slave2.stop('done');
    await server.close();
    await backend.close();
    await redis.stop();
  });
  const url = (manager as unknown as { webhook: { url: string } }).webhook.url;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/webhook$/);
  await until('one device', () => slave.running().length === 1);
  count = 3;
  t.equal((await fetch(url)).status, 401, 'no token');
  t.equal((await fetch(`${url}?token=wrong`)).status, 401);
  t.equal((await fetch(url.replace('/webhook', '/other'))).status, 404);
  const res = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer hook-secret' }, body: '{}' });
  t.equal(res.status, 200);
  await until('the webhook re-read the list: three devices', () => slave.running().length === 3, 3000);

  const url2 = (direct as unknown as { webhook: { url: string } }).webhook.url;
  const post = (body: unknown) => fetch(url2, { method: 'POST', body: JSON.stringify(body) });
  t.equal((await post({ type: 'install.create', payload: { device: { id: 'h-1', configs: { v: 1 } } } })).status, 200);
  await until('created', () => slave2.running().includes('h-1'));
  t.equal((await post([{ type: 'install.update', payload: { device: { id: 'h-1', configs: { v: 2 } } } }])).status, 200);
  await until('restarted with v 2', () => events.some((e) => e.id === 'h-1' && e.ev === 'start' && (e.configs as { v: number }).v === 2));
  t.equal((await post({ events: [{ type: 'install.delete', payload: { device: { id: 'h-1' } } }] })).status, 200);
  await until('uninstalled', () => events.some((e) => e.id === 'h-1' && e.ev === 'uninstall'));
  t.equal((await post({ type: 'bogus' })).status, 400);
  t.equal((await fetch(url2, { method: 'POST', body: 'not json' })).status, 400);
  const badDevice = await post({ type: 'install.create', payload: { device: { id: 'h-2', hardware: 7 } } });
  t.equal(badDevice.status, 400);
  t.same(await badDevice.json(), { error: 'webhook event 0: payload.device.hardware: expected text of at most 64 characters such as "obnizb1", got number 7' });

  // over 1 MiB: 413 with the reason, whether the size is announced (Content-Length) or only counted (chunked)
  const reason = { error: 'the body is larger than 1 MiB (1048576 bytes): a webhook call carries install events, not data' };
  const limit = 1 << 20;
  t.equal((await fetch(url2, { method: 'POST', body: 'x'.repeat(limit) })).status, 400, 'exactly 1 MiB is read (and is no JSON)');
  const announced = await fetch(url2, { method: 'POST', body: 'x'.repeat(limit + 1) });
  t.equal(announced.status, 413, 'Content-Length over 1 MiB');
  t.same(await announced.json(), reason);
  const counted = await postChunked(url2, 'x'.repeat(64 * 1024), 40);
  t.equal(counted.status, 413, 'a chunked body passing 1 MiB');
  t.same(JSON.parse(counted.body), reason);
  t.notOk(counted.body.includes('\n'), 'one line');
  t.equal((await post({ type: 'install.create', payload: { device: { id: 'h-3' } } })).status, 200, 'the webhook still answers afterwards');
});

/** POSTs `count` chunks with Transfer-Encoding: chunked (no Content-Length); resolves with the answer, even if the server closes before reading it all. */
function postChunked(url: string, chunk: string, count: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    for (let i = 0; i < count; i++) req.write(chunk);
    req.end();
  });
}
