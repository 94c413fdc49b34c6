// What a user can do beyond HTTP requests, through whole tests in one
// process against real servers: vikhry's `requires`, k6-style checks and the
// checks>N% threshold, an onStart that fails (counted, its user runs no step,
// retried after a back-off), the JSON-RPC client against a JSON-RPC server
// and the WebSocket client against a ws server.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { checkScenario, checkUrls } from '../plugins/load-test/scenario/scenario.ts';
import { evaluateThresholds, parseThreshold } from '../plugins/load-test/metrics/thresholds.ts';
import type { TestResult } from '../plugins/load-test/metrics/results.ts';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startLoad, startTarget } from './support/load.ts';
import { freePort } from './support/redis.ts';

const fixture = (name: string) => join(root, 'test/fixtures/load-test', name);
const target = await startTarget();
const load = await startLoad({ options: { metricsInterval: 0.5, gracefulStop: 2 } });
t.teardown(async () => {
  await load.handle.stop('test over');
  await target.close();
});
const controller = load.controller!;

async function runTest(scenario: string, users: number, seconds: number, params: Record<string, unknown>): Promise<TestResult> {
  const { finished } = await controller.start({ scenario: fixture(scenario), users, spawnRate: 1000, durationMs: seconds * 1000, params });
  return finished;
}
const metric = (result: TestResult, name: string) => result.metrics.find((m) => m.name === name);
const thresholds = (result: TestResult, ...texts: string[]) => evaluateThresholds(texts.map(parseThreshold), result).map((o) => [o.threshold, o.ok]);

t.test('requires: a step runs only once the steps it requires have completed for that user', async (t) => {
  const before = await target.stats();
  const result = await runTest('requires.mjs', 4, 2, { baseUrl: target.url });
  const served = await target.stats();
  const loggedIn = metric(result, 'check:logged in before browsing')!;
  t.ok(loggedIn.count > 20, `browse ran ${loggedIn.count} times`);
  t.equal(loggedIn.errors, 0, 'never before its user had logged in');
  t.equal(metric(result, 'check:login tried 3 times first')!.errors, 0, 'nor before the login that completed (the third try)');
  t.equal(metric(result, 'step:login')!.count, 8, 'each user failed login twice, then completed it');
  t.equal(served.counts['GET /browse']! - (before.counts['GET /browse'] ?? 0), metric(result, 'GET /browse')!.count, 'the browses the server saw');
  t.ok(metric(result, 'GET /login')!.count >= 4, 'every user logged in');
});

t.test('requires and base URLs that cannot work are one line before the test starts', async (t) => {
  const run = () => {};
  const scenario = (steps: object[], more: object = {}) => checkScenario({ steps, ...more }, 'shop.mjs');
  t.throws(() => scenario([{ name: 'a', requires: ['b'], run }]), { message: 'scenario shop.mjs: steps[0].requires names "b", which is no step: expected one of a' });
  t.throws(() => scenario([{ name: 'a', requires: ['a'], run }]), { message: 'scenario shop.mjs: steps[0] (a) requires itself: it could never run' });
  t.throws(() => scenario([{ name: 'a', requires: ['b'], run }, { name: 'b', requires: ['a'], run }]), { message: 'scenario shop.mjs: steps a, b require each other: none of them could ever run' });
  t.throws(() => scenario([{ name: 'a', requires: 'b', run }]), { message: "scenario shop.mjs: steps[0].requires must be a list of step names, e.g. requires: ['login']" });
  t.same(scenario([{ name: 'a', run }, { name: 'b', requires: ['a'], run }]).steps.map((s) => s.requires), [undefined, ['a']]);
  const ok = scenario([{ name: 'a', run }], { params: { baseUrl: 'http://127.0.0.1:8080' } });
  t.doesNotThrow(() => checkUrls(ok, { wsUrl: 'ws://127.0.0.1:9000', jsonrpcUrl: 'https://rpc.example/v1' }, 'shop.mjs'));
  t.throws(() => checkUrls(ok, { baseUrl: 'localhost:8080' }, 'shop.mjs'), { message: /^--param baseUrl "localhost:8080" is not a URL the load test can use: expected http:\/\/ or https:\/\/ and a host/ });
  t.throws(() => checkUrls(ok, { jsonrpcUrl: '/rpc' }, 'shop.mjs', 'params'), { message: /^params jsonrpcUrl "\/rpc" is not a URL/ });
  t.throws(() => checkUrls(scenario([{ name: 'a', run }], { params: { wsUrl: 'ftp://x' } }), {}, 'shop.mjs'), { message: /^scenario shop\.mjs: params\.wsUrl "ftp:\/\/x" is not a URL the load test can use: expected ws:\/\/ or wss:\/\// });
  t.throws(() => checkUrls(scenario([{ name: 'a', run }], { baseUrl: 'http//x' }), { baseUrl: 'http://fine' }, 'shop.mjs'), { message: /^scenario shop\.mjs: baseUrl "http\/\/x"/ });
});

t.test('checks: counted per name; checks>N% over all of them or NAME:checks for one', async (t) => {
  const result = await runTest('checks.mjs', 4, 2, { baseUrl: target.url });
  const status = metric(result, 'check:status is 200')!;
  const odd = metric(result, 'check:odd ids')!;
  t.ok(status.count > 20, `checks counted (${status.count})`);
  t.equal(status.errors, 0);
  t.equal(odd.count, status.count, 'one of each per iteration');
  const oddShare = 1 - odd.errors / odd.count;
  t.ok(oddShare > 0.3 && oddShare < 0.7, `odd ids passed for about half (${(oddShare * 100).toFixed(1)}%)`);
  t.equal(result.total.errors, 0, 'a failed check is no request error');
  t.same(thresholds(result, 'checks>99%', 'status is 200:checks>99%', 'odd ids:checks>99%', 'odd ids:checks>30%', 'nothing:checks>1%'), [
    ['checks>99%', false],
    ['status is 200:checks>99%', true],
    ['odd ids:checks>99%', false],
    ['odd ids:checks>30%', true],
    ['nothing:checks>1%', false],
  ]);
  t.throws(() => parseThreshold('checks>99'), /gives checks without %/);
});

t.test('checks>99% fails coord load run with exit 99', async (t) => {
  buildIfStale();
  const args = ['load', 'run', '--scenario', fixture('checks.mjs'), '--users', '2', '--duration', '1s', '--param', `baseUrl=${target.url}`, '--threshold', 'checks>99%', '--threshold', 'status is 200:checks>99%'];
  const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist/bundle/coord.js'), ...args], { cwd: root });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.on('exit', (code) => resolve({ code, out }));
  });
  t.equal(r.code, 99);
  t.match(r.out, /FAIL\s+checks>99%\s+\(actual 50\.00%\)|FAIL\s+checks>99%\s+\(actual [\d.]+%\)/);
  t.match(r.out, /ok\s+status is 200:checks>99%\s+\(actual 100\.00%\)/);
  t.match(r.out, /check:odd ids/);
});

t.test('an onStart that throws: counted, retried after a back-off, and its user runs no step', async (t) => {
  const before = (await target.stats()).counts['GET /step'] ?? 0;
  const result = await runTest('start-fails.mjs', 4, 2.5, { baseUrl: target.url });
  const served = ((await target.stats()).counts['GET /step'] ?? 0) - before;
  const failed = metric(result, 'hook:onStart')!;
  // Users 2 and 4 try at once, again after 1 s, after 2 s more: 2 or 3 tries each in 2.5 s.
  t.ok(failed.count >= 4 && failed.count <= 6, `retried with a back-off: ${failed.count} failures of 2 users`);
  t.match(result.errors, [{ metric: 'hook:onStart', message: /user [24] cannot log in/ }]);
  t.equal(result.total.errors, failed.count, 'the failures count in the total');
  t.ok(metric(result, 'GET /step')!.count > 10, 'the users whose onStart succeeded ran their steps');
  t.notOk(metric(result, 'GET /step (even user)'), 'the users whose onStart failed ran none');
  t.equal(served, metric(result, 'GET /step')!.count, 'every step request the server saw is counted');
});

t.test('a step that never settles: its timeout fails it and the user moves on; without one, the stop abandons it', async (t) => {
  const timedOut = await runTest('stuck-timeout.mjs', 2, 1.5, {});
  const stuck = metric(timedOut, 'step:stuck')!;
  // Each run: 200 ms, then the back-off (10, 20, 40, 80, 160 ms): 5 or 6 runs per user in 1.5 s, one more if the stop comes late.
  t.ok(stuck.count >= 6 && stuck.count <= 16, `each run failed at its timeout (${stuck.count})`);
  t.equal(stuck.errors, stuck.count);
  t.match(timedOut.errors, [{ metric: 'step:stuck', message: 'timeout' }]);
  t.ok(stuck.p50 >= 190 && stuck.p50 < 600, `after 200 ms (p50 ${stuck.p50} ms)`);

  const started = performance.now();
  const abandoned = await runTest('stuck.mjs', 2, 0.5, {});
  const took = performance.now() - started;
  // gracefulStop is 2 s here; then 500 ms for the step to return; then the user is left behind.
  t.ok(took >= 2400 && took < 15_000, `the stop ended (${took.toFixed(0)} ms: the grace period, then the abandonment)`);
  t.equal(abandoned.total.errors, 0, 'an abandoned step is no failure of the scenario');
  t.equal(await load.handle.backend.send(['GET', 'test:state']), 'IDLE');
});

t.test('JSON-RPC: calls timed and counted per method; JSON-RPC errors are failures', async (t) => {
  const calls: Record<string, number> = {};
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const call = JSON.parse(body) as { jsonrpc: string; id: number; method: string; params?: unknown };
      calls[call.method] = (calls[call.method] ?? 0) + 1;
      const reply = (payload: object) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...payload }));
      };
      if (req.url !== '/rpc' || call.jsonrpc !== '2.0') return void res.writeHead(400).end();
      if (call.method === 'add') return void setTimeout(() => reply({ result: (call.params as number[])[0]! + (call.params as number[])[1]! }), 5);
      if (call.method === 'fail') return reply({ error: { code: -32000, message: 'it failed', data: call.params } });
      reply({ error: { code: -32601, message: 'Method not found' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => void server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`;

  const result = await runTest('jsonrpc.mjs', 3, 2, { jsonrpcUrl: url });
  const add = metric(result, 'jsonrpc add')!;
  t.equal(add.kind, 'http', 'a call is a request: in the total');
  t.equal(add.count, calls.add, `every call the server answered is counted (${add.count})`);
  t.ok(add.count > 10);
  t.equal(add.errors, 0);
  t.ok(add.p50 >= 5, `timed from send to reply (p50 ${add.p50} ms ≥ the server's 5 ms)`);
  t.equal(metric(result, 'check:add answers id + 1')!.errors, 0, 'the result reaches the step');
  t.equal(metric(result, 'check:fail is a JSON-RPC error')!.errors, 0, 'the error object reaches the step');
  const fail = metric(result, 'jsonrpc fail')!;
  const missing = metric(result, 'jsonrpc missing')!;
  t.same([fail.count, fail.errors], [calls.fail, calls.fail], 'a JSON-RPC error is a failure');
  t.same([missing.count, missing.errors], [calls.missing, calls.missing]);
  t.equal(result.total.errors, fail.errors + missing.errors, 'in the total errors');
  t.match(result.errors, [
    { metric: /jsonrpc (fail|missing)/, message: /JSON-RPC -32(000: it failed|601: Method not found)/ },
    { metric: /jsonrpc (fail|missing)/, message: /JSON-RPC -32(000: it failed|601: Method not found)/ },
  ]);
});

t.test('WebSocket: connects, round trips and messages timed and counted; connections closed at the end', async (t) => {
  const port = await freePort();
  const wss = new WebSocketServer({ port, host: '127.0.0.1' });
  let connections = 0;
  let echoed = 0;
  wss.on('connection', (socket, req) => {
    connections += 1;
    if (req.url !== '/echo') return socket.close(1008, 'no such path');
    socket.send('hello');
    socket.on('message', (data) => {
      echoed += 1;
      setTimeout(() => socket.send(String(data)), 3);
    });
  });
  t.teardown(() => void wss.close());

  const result = await runTest('websocket.mjs', 3, 2, { wsUrl: `ws://127.0.0.1:${port}` });
  const connect = metric(result, 'ws connect /echo')!;
  t.same([connect.kind, connect.count, connect.errors], ['http', 3, 0], 'one connect per user, timed, in the total');
  t.equal(connections, 3);
  const trips = metric(result, 'ws /echo')!;
  t.equal(trips.count, echoed, `every round trip counted (${trips.count})`);
  t.ok(trips.count > 10);
  t.equal(trips.errors, 0);
  t.ok(trips.p50 >= 3, `timed from send to reply (p50 ${trips.p50} ms ≥ the server's 3 ms)`);
  t.equal(metric(result, 'ws sent /echo')!.count, echoed, 'messages sent');
  t.equal(metric(result, 'ws received /echo')!.count, echoed + 3, 'messages received: the replies and each hello');
  t.equal(metric(result, 'check:echoed')!.errors, 0);
  t.equal(metric(result, 'check:hello first')!.errors, 0);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(wss.clients.size, 0, 'the users closed their connections when they stopped');

  const refused = await runTest('websocket.mjs', 2, 1, { wsUrl: `ws://127.0.0.1:${await freePort()}` });
  const failedConnect = metric(refused, 'ws connect /echo')!;
  t.ok(failedConnect.count >= 2 && failedConnect.errors === failedConnect.count, 'a refused connect is an error');
  t.match(refused.errors, [{ metric: /ws connect \/echo|hook:onStart/, message: /ECONNREFUSED/ }]);
});
