// The scenario's HTTP client (plugins/load-test/clients/http-client.ts) against a
// local node:http server: what a step gets back (status, headers, body, JSON,
// latency, error) and what is recorded (metric name, error), for statuses,
// bodies, timeouts, aborts, refused connections and bad URLs; and which
// connections requests go out on: with `connections` 0 each user has its own
// per origin (its concurrent requests still go out at once), with N > 0 the
// users share at most N per origin.
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { inspect } from 'node:util';
import { HttpClient, type HttpResponse } from '../plugins/load-test/clients/http-client.ts';
import { HttpDispatchers } from '../plugins/load-test/clients/http-connections.ts';
import { Targets } from '../plugins/load-test/clients/http-targets.ts';
import type { MetricsRecorder } from '../plugins/load-test/metrics/recorder.ts';
import { RequestScope } from '../plugins/load-test/clients/request-scope.ts';
import { freePort } from './support/redis.ts';

/** /slow?batch=1 requests the server holds now, and the most it held at once since reset. */
let slowInFlight = 0;
let slowPeak = 0;

/** The server: routes by path; counts the connections it accepted and keeps the open ones. */
function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url!, 'http://x');
  const query = (name: string) => url.searchParams.get(name) ?? '';
  switch (url.pathname) {
    case '/status':
      return void res.writeHead(Number(query('s'))).end('s');
    case '/slow': // ?batch counts it among the requests held at once
      if (query('batch')) slowPeak = Math.max(slowPeak, ++slowInFlight);
      return void setTimeout(() => (query('batch') && slowInFlight--, res.end('late')), Number(query('ms')));
    case '/big': // chunked, in two parts, with a repeated header
      res.writeHead(200, { 'set-cookie': ['a=1', 'b=2'] });
      res.write('x'.repeat(70_000));
      return void setTimeout(() => res.end('é€'), 5);
    case '/hints': // a 103 before the final response
      res.writeEarlyHints({ link: '</a.css>; rel=preload' });
      return void res.end('after hints');
    case '/socket': // which connection: its client port
      return void res.end(String(req.socket.remotePort));
    default:
      res.writeHead(200, { 'content-type': 'application/json', 'x-path': req.url! });
      res.end(JSON.stringify({ method: req.method, url: req.url, contentType: req.headers['content-type'], xa: req.headers['x-a'], body }));
  }
}
const open = new Set<Socket>();
let accepted = 0;
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => handle(req, res, body));
});
server.on('connection', (socket: Socket) => {
  accepted += 1;
  open.add(socket);
  socket.on('close', () => open.delete(socket));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});

type Record = [metric: string, ms: number, error: string | undefined, kind: string | undefined];

/** A worker's dispatchers and targets, a recorder that keeps what it is given, and users on them. */
function worker(connections: number, baseUrl: string | undefined) {
  const records: Record[] = [];
  const recorder = { record: (metric: string, ms: number, error?: string, kind?: string) => void records.push([metric, ms, error, kind]) };
  const dispatchers = new HttpDispatchers(baseUrl, connections);
  const targets = new Targets(baseUrl, dispatchers);
  function user() {
    const hard = new AbortController();
    const connections = dispatchers.forUser();
    const own = { step: undefined as RequestScope | undefined, intended: undefined as number | undefined };
    const scope = new RequestScope(hard.signal);
    const http = new HttpClient({
      recorder: recorder as unknown as MetricsRecorder,
      targets,
      connections,
      scope: () => own.step ?? scope,
      takeIntendedStart: () => {
        const intended = own.intended;
        own.intended = undefined;
        return intended;
      },
    });
    return { http, hard, connections, own };
  }
  let closed: Promise<void> | undefined;
  return { records, dispatchers, user, close: () => (closed ??= dispatchers.close()) };
}

const waitFor = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

for (const connections of [0, 4]) {
  t.test(`requests and responses (connections ${connections})`, async (t) => {
    const w = worker(connections, base);
    t.teardown(w.close);
    const { http } = w.user();

    const get = await http.get('/a/b?q=1');
    t.equal(get.status, 200);
    t.equal(get.ok, true);
    t.equal(get.error, undefined);
    t.equal(get.headers['content-type'], 'application/json', 'headers by lower-case name');
    t.same(get.json(), { method: 'GET', url: '/a/b?q=1', body: '' }, 'the body as JSON');
    t.match(get.body, /^\{"method":"GET"/, 'the body as text');
    t.ok(get.latency > 0, 'a latency');
    t.same(w.records.at(-1)!.slice(2), [undefined, 'http'], 'recorded as an http request without error');
    t.equal(w.records.at(-1)![0], 'GET /a/b', 'default metric: method and path without the query');
    t.equal(w.records.at(-1)![1], get.latency, 'the latency recorded is the one returned');

    t.equal((await http.get('/a/../c/./d?x=y z')).headers['x-path'], '/c/d?x=y%20z', 'the path normalised and escaped as URL does');
    t.equal(w.records.at(-1)![0], 'GET /c/d');
    t.equal((await http.get('/é?q=ü')).headers['x-path'], '/%C3%A9?q=%C3%BC');
    t.equal(w.records.at(-1)![0], 'GET /%C3%A9');
    t.equal((await http.get(`${base}/abs`)).headers['x-path'], '/abs', 'an absolute URL');
    const other = await http.get(`${base.replace('127.0.0.1', 'localhost')}/other`);
    t.equal(other.status, 200, 'another origin (same server, by name)');
    t.equal(w.records.at(-1)![0], 'GET /other');

    t.same((await http.post('/p', { json: { a: 1 }, headers: { 'x-a': 'h' } })).json(), {
      method: 'POST', url: '/p', contentType: 'application/json', xa: 'h', body: '{"a":1}',
    }, 'json: sent as JSON with its content-type, headers sent');
    t.equal((await http.post('/p', { json: [1], headers: { 'content-type': 'text/x' } })).json<{ contentType: string }>().contentType, 'text/x', 'a content-type given wins');
    t.same((await http.put('/p', { body: 'raw', metric: 'PUT raw' })).json<{ body: string }>().body, 'raw', 'a string body');
    t.equal(w.records.at(-1)![0], 'PUT raw', 'the metric name given');
    t.same((await http.patch('/p', { body: new TextEncoder().encode('bytes') })).json<{ method: string; body: string }>(), { method: 'PATCH', url: '/p', body: 'bytes' }, 'a bytes body');
    t.equal((await http.delete('/d')).json<{ method: string }>().method, 'DELETE');
    t.equal((await http.request('HEAD', '/h')).body, '', 'HEAD: no body');
    t.same(w.records.slice(-6).map((r) => r[0]), ['POST /p', 'POST /p', 'PUT raw', 'PATCH /p', 'DELETE /d', 'HEAD /h'], 'each method in its metric');
  });

  t.test(`statuses, bodies and errors (connections ${connections})`, async (t) => {
    const w = worker(connections, base);
    t.teardown(w.close);
    const { http } = w.user();
    const last = () => w.records.at(-1)!;

    const failed = await http.get('/status?s=500');
    t.same([failed.status, failed.ok, failed.error, failed.body], [500, false, 'HTTP 500', 's'], 'a 500 is an error, with its body');
    t.same(last().slice(2), ['HTTP 500', 'http'], 'recorded as an error of its metric');
    t.throws(() => failed.json(), SyntaxError, 'json() of a body that is no JSON throws');
    t.same([(await http.get('/status?s=404', { expect: 404 })).ok, last()[2]], [true, undefined], 'expect: a 404 that was expected');
    t.same([(await http.get('/status?s=201', { expect: [200, 204] })).error, last()[2]], ['HTTP 201', 'HTTP 201'], 'a status not in the list');
    t.equal((await http.get('/status?s=201', { expect: [200, 201] })).ok, true, 'a status in the list');

    const big = await http.get('/big');
    t.equal(big.body.length, 70_002, 'a chunked body in parts, whole');
    t.ok(big.body.endsWith('xé€'), 'decoded as UTF-8 across chunks');
    t.same(big.headers['set-cookie'], ['a=1', 'b=2'], 'a repeated header as a list');
    t.same([(await http.get('/hints')).status, (await http.get('/hints')).body], [200, 'after hints'], 'a 103 first: the final response is returned');

    const shown = JSON.parse(JSON.stringify(failed));
    t.same(Object.keys(shown).sort(), ['body', 'error', 'headers', 'latency', 'ok', 'status'], 'JSON.stringify shows the fields');
    t.equal(shown.body, 's');
    t.match(inspect(big, { depth: 0 }), /status: 200/, 'console.log shows the fields');
  });

  t.test(`timeouts, aborts, refused connections, bad URLs (connections ${connections})`, async (t) => {
    const w = worker(connections, base);
    t.teardown(w.close);
    const { http, hard, own } = w.user();
    const last = () => w.records.at(-1)!;

    const timedOut = await http.get('/slow?ms=300', { timeout: 50 });
    t.same([timedOut.status, timedOut.ok, timedOut.error], [0, false, 'timeout'], 'a timeout');
    t.ok(timedOut.latency >= 45 && timedOut.latency < 250, `after its timeout (${timedOut.latency.toFixed(0)} ms)`);
    t.same(last().slice(2), ['timeout', 'http']);
    t.equal((await http.get('/slow?ms=20', { timeout: 500 })).body, 'late', 'answered within its timeout');

    slowPeak = 0;
    const parallel = await Promise.all([1, 2, 3, 4].map((i) => http.get(`/slow?ms=${100 + i}&batch=1`)));
    t.same(parallel.map((r) => r.body), ['late', 'late', 'late', 'late'], 'concurrent requests of one user');
    t.equal(slowPeak, 4, 'went out at once: the server held all 4 together');

    // The quick request has 490 ms of slack before the step's timeout, so a loaded machine does not cut it too.
    own.step = new RequestScope(AbortSignal.any([hard.signal, AbortSignal.timeout(500)]));
    const [cut, quick] = await Promise.all([http.get('/slow?ms=3000'), http.get('/slow?ms=10')]);
    t.same([cut.error, quick.body], ['timeout', 'late'], "a step's timeout aborts what is still in flight");
    t.equal((await http.get('/a')).error, 'timeout', 'and what the step sends after it');
    own.step = undefined;

    own.intended = performance.now() - 1000;
    t.ok((await http.get('/a')).latency >= 1000, 'arrival-rate: timed from when the iteration was due');
    t.ok((await http.get('/a')).latency < 1000, 'only its first request');

    const slow = http.get('/slow?ms=500');
    setTimeout(() => hard.abort(new Error('grace period over')), 50);
    const aborted = await slow;
    t.same([aborted.status, aborted.error], [0, 'aborted'], "the user's hard stop aborts a request in flight");
    t.same(last().slice(2), ['aborted', 'http']);
    t.equal((await http.get('/a')).error, 'aborted', 'and any it sends afterwards');

    const refused = worker(connections, `http://127.0.0.1:${await freePort()}`);
    t.teardown(refused.close);
    const no = await refused.user().http.get('/x');
    t.same([no.status, no.ok, no.error], [0, false, 'ECONNREFUSED'], 'a refused connection');
    t.same(refused.records.at(-1)!.slice(2), ['ECONNREFUSED', 'http']);

    const noBase = worker(connections, undefined);
    t.teardown(noBase.close);
    const invalid = await noBase.user().http.get('/relative').then(() => undefined, (err: NodeJS.ErrnoException) => err);
    t.same([invalid?.name, invalid?.code], ['TypeError', 'ERR_INVALID_URL'], 'a relative path without a base URL rejects');
    const notHttp = await noBase.user().http.get('ftp://127.0.0.1/x');
    t.equal(notHttp.ok, false, 'a URL that is no HTTP one: an error of its metric');
    t.same(noBase.records.at(-1)![0], 'GET /x');
  });
}

t.test('connections 0: each user has its own connection per origin, closed with the user', async (t) => {
  const w = worker(0, base);
  t.teardown(w.close);
  const before = accepted;
  const [a, b] = [w.user(), w.user()];
  const portsA = new Set<string>();
  for (let i = 0; i < 5; i++) portsA.add((await a.http.get('/socket')).body);
  const portB = (await b.http.get('/socket')).body;
  t.equal(portsA.size, 1, "a user's requests one after another go out on one connection");
  t.not(portB, [...portsA][0], 'another user has its own');
  const other = (await a.http.get(`${base.replace('127.0.0.1', 'localhost')}/socket`)).body;
  t.not(other, [...portsA][0], 'another origin: another connection of the user');
  t.equal((await a.http.get('/socket')).body, [...portsA][0], 'and back on the first');
  t.equal(accepted - before, 3, 'three connections in all');

  const concurrent = await Promise.all([1, 2, 3].map(() => a.http.get('/socket')));
  t.equal(new Set(concurrent.map((r) => r.body)).size, 3, "a user's concurrent requests go out on connections of their own");
  t.equal((await a.http.get('/socket')).body, [...portsA][0], 'then on its own again');

  const open0 = open.size;
  await a.connections.close();
  await waitFor(() => open.size <= open0 - 2, "the user's two connections closed");
  t.pass("a user's own connections close when it stops");
  t.equal((await b.http.get('/socket')).body, portB, 'the other user keeps its own');
  await w.close();
  await waitFor(() => open.size === 0, 'every connection closed');
  t.pass('closing the dispatchers closes the rest');
});

t.test('connections N > 0: the users share at most N per origin', async (t) => {
  const w = worker(2, base);
  t.teardown(w.close);
  const users = [w.user(), w.user(), w.user()];
  const before = accepted;
  const started = performance.now();
  const all = await Promise.all(users.flatMap((u) => [u.http.get('/slow?ms=60'), u.http.get('/slow?ms=60')]));
  t.same(all.map((r) => r.body), Array(6).fill('late'), 'six concurrent requests answered');
  t.equal(accepted - before, 2, 'on two connections');
  t.ok(performance.now() - started >= 170, `three at a time on each (${(performance.now() - started).toFixed(0)} ms for 6 × 60 ms)`);
  await w.close();
  await waitFor(() => open.size === 0, 'every connection closed');
  t.pass('closed at the end');
});
