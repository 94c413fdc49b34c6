// The proxy's command relay (plugins/webdriver/relay/command-relay.ts), byte by byte: a
// routed request goes straight to its upstream with the session id swapped
// in its path (never in bodies: they are the user's data)
// both ways; everything else reaches the node:http server unchanged; answers
// come back in order on one connection; an upstream that is gone hands the
// request to the server; what the relay does not read (chunked bodies,
// upgrades, malformed heads) is the server's for the rest of the connection.
// Whole-grid behaviour with real drivers and clients: webdriver-standalone,
// webdriver-w3c, webdriver-faults.
import t from 'tap';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { type CommandRelayLimits, commandRelay, type Straight } from '../plugins/webdriver/relay/command-relay.ts';
import type { RequestHead } from '../plugins/webdriver/relay/http-frames.ts';
import { realClient, trustedProxies } from '../plugins/webdriver/http/client-address.ts';
import { until } from './support/until.ts';

interface Seen {
  method: string;
  url: string;
  host: string;
  type?: string;
  body: string;
}

/** An HTTP server that records what it got and answers `answer(req, body)` (default: JSON echo). */
async function recorder(answer?: (req: IncomingMessage, body: string, res: import('node:http').ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method!, url: req.url!, host: req.headers.host!, type: req.headers['content-type'], body });
      if (answer) return answer(req, body, res);
      const out = JSON.stringify({ value: { url: req.url, body } });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, seen, port: (server.address() as AddressInfo).port };
}

/** The relay in front of `inside`, routing /session/grid-1/* to `upstreamPort` as /session/driver-9/*. */
async function relayFor(inside: Server, upstreamPort: () => number, answered: { status: number; body: string; bytesIn: number }[] = [], limits: CommandRelayLimits = {}) {
  const route = (head: RequestHead): Straight | undefined => {
    const m = /^\/session\/grid-1(\/.*)$/.exec(head.target);
    if (!m || head.method === 'DELETE') return undefined;
    return {
      host: '127.0.0.1',
      port: upstreamPort(),
      path: `/session/driver-9${m[1]}`,
      headers: 'X-Coord-Node-Key: k1\r\n',
      answered: (status, body, bytesIn) => answered.push({ status, body: body.toString(), bytesIn }),
    };
  };
  const d = commandRelay(inside, route, limits);
  await new Promise<void>((r) => d.server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    d.server.close();
    d.closeAll();
  });
  return { port: (d.server.address() as AddressInfo).port, answered };
}

/** Writes `parts` (with a pause between them) and collects what comes back until `expectAnswers` HTTP answers are complete or the socket closes. */
function talk(port: number, parts: string[], expectAnswers: number, opts: { end?: boolean } = {}): Promise<{ text: string; closed: boolean; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    const done = () => resolve({ text, closed, socket });
    const timer = setTimeout(done, 5000);
    const complete = () => {
      let at = 0;
      let n = 0;
      for (;;) {
        const end = text.indexOf('\r\n\r\n', at);
        if (end === -1) break;
        const length = Number(/content-length: *(\d+)/i.exec(text.slice(at, end))?.[1] ?? 0);
        if (Buffer.byteLength(text.slice(end + 4)) < length) break;
        at = end + 4 + length;
        n++;
      }
      return n;
    };
    socket.on('data', (d) => {
      text += d.toString();
      if (complete() >= expectAnswers) {
        clearTimeout(timer);
        setTimeout(done, 50); // anything more (there should be nothing) arrives too
      }
    });
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      done();
    });
    socket.on('error', () => {});
    void (async () => {
      for (const part of parts) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 30));
      }
      if (opts.end) socket.end();
    })();
  });
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: grid.example:4444\r\n${extra}\r\n`;
const post = (path: string, body: string, extra = '') => `POST ${path} HTTP/1.1\r\nHost: grid.example:4444\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const bodies = (text: string) => [...text.matchAll(/\r\n\r\n(\{[^\r]*?\})(?=HTTP\/1\.1|$)/g)].map((m) => JSON.parse(m[1]!));

t.test('a routed command goes straight: the id swapped in the path only, Host and the node key set, bodies untouched both ways, counted', async (t) => {
  const upstream = await recorder((req, body, res) => {
    const out = JSON.stringify({ value: { sessionId: 'driver-9', got: body } });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': out.length }).end(out);
  });
  const inside = await recorder();
  t.teardown(() => (upstream.server.close(), inside.server.close()));
  const { port, answered } = await relayFor(inside.server, () => upstream.port);
  const { text } = await talk(port, [post('/session/grid-1/element', '{"using":"css","note":"grid-1"}')], 1);
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  t.same(upstream.seen.map((s) => [s.method, s.url, s.host, s.type, s.body]), [['POST', '/session/driver-9/element', `127.0.0.1:${upstream.port}`, 'application/json', '{"using":"css","note":"grid-1"}']], 'up: the driver\'s id in the path, its own Host, the body as the client sent it');
  t.same(bodies(text), [{ value: { sessionId: 'driver-9', got: '{"using":"css","note":"grid-1"}' } }], 'down: the answer as the upstream sent it');
  t.equal(inside.seen.length, 0, 'the server saw nothing');
  t.same(answered.map((a) => [a.status, a.bytesIn]), [[200, 31]], 'answered() got status and sizes');
});

t.test('requests on one connection, some straight and some not, pipelined or not, are answered in order', async (t) => {
  const upstream = await recorder();
  const inside = await recorder();
  t.teardown(() => (upstream.server.close(), inside.server.close()));
  const { port } = await relayFor(inside.server, () => upstream.port);
  const pipelined = get('/session/grid-1/title') + post('/session', '{"capabilities":{}}') + get('/session/grid-1/url') + get('/status');
  const { text } = await talk(port, [pipelined, get('/session/grid-1/again')], 5);
  t.same(
    bodies(text).map((b) => b.value.url),
    ['/session/driver-9/title', '/session', '/session/driver-9/url', '/status', '/session/driver-9/again'],
    'five answers, in the order asked',
  );
  t.same(upstream.seen.map((s) => s.url), ['/session/driver-9/title', '/session/driver-9/url', '/session/driver-9/again'], 'the commands went straight');
  t.same(inside.seen.map((s) => s.url), ['/session', '/status'], 'the server got the rest, unchanged');
  t.equal(inside.seen[0]!.body, '{"capabilities":{}}');
});

t.test('a body that arrives in pieces reaches the server whole; a half-closing client still gets its answer', async (t) => {
  const inside = await recorder();
  t.teardown(() => inside.server.close());
  const { port } = await relayFor(inside.server, () => 1);
  const whole = post('/session', '{"capabilities":{"alwaysMatch":{}}}');
  const { text } = await talk(port, [whole.slice(0, 40), whole.slice(40, 120), whole.slice(120)], 1, { end: true });
  t.same(bodies(text)[0].value.body, '{"capabilities":{"alwaysMatch":{}}}');
});

t.test('a body of megabytes (a file upload) reaches the server whole, and the connection goes on', async (t) => {
  const upstream = await recorder();
  const inside = await recorder((req, body, res) => {
    const out = JSON.stringify({ value: { size: body.length } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
  });
  t.teardown(() => (upstream.server.close(), inside.server.close()));
  const { port } = await relayFor(inside.server, () => upstream.port);
  const big = JSON.stringify({ file: 'x'.repeat(3 * 1024 * 1024) });
  // behind a command in flight, so the relay holds megabytes it cannot take yet (and stops reading the client)
  const { text } = await talk(port, [get('/session/grid-1/url') + post('/session/grid-1/se/file', big) + get('/session/grid-1/title')], 3);
  t.same(bodies(text)[1], { value: { size: big.length } }, 'all of it');
  t.same(bodies(text)[2].value.url, '/session/driver-9/title', 'then a command, straight');
  t.same(upstream.seen.map((s) => s.url), ['/session/driver-9/url', '/session/driver-9/title']);
});

t.test('an upstream that is gone: the request goes to the server instead, once', async (t) => {
  const upstream = await recorder();
  const deadPort = upstream.port;
  await new Promise((r) => upstream.server.close(r));
  const inside = await recorder((req, body, res) => {
    const out = JSON.stringify({ value: { error: 'invalid session id', message: `${req.url} is gone` } });
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
  });
  t.teardown(() => inside.server.close());
  const { port } = await relayFor(inside.server, () => deadPort);
  const { text } = await talk(port, [get('/session/grid-1/title'), get('/session/grid-1/url')], 2);
  t.match(text, /^HTTP\/1\.1 404 /);
  t.same(inside.seen.map((s) => s.url), ['/session/grid-1/title', '/session/grid-1/url'], 'the server got both, ids untouched');
});

t.test('a chunked answer from upstream reaches the client with a length; Connection: close is honoured', async (t) => {
  const upstream = await recorder((req, body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"value":');
    res.end('"driver-9"}');
  });
  const inside = await recorder();
  t.teardown(() => (upstream.server.close(), inside.server.close()));
  const { port } = await relayFor(inside.server, () => upstream.port);
  const { text, closed } = await talk(port, [get('/session/grid-1/title', 'Connection: close\r\n')], 1);
  t.match(text, /content-length: 20\r\n/);
  t.same(bodies(text), [{ value: 'driver-9' }]);
  t.ok(closed, 'the connection closed after the answer');
});

t.test('what the relay does not read goes to the server for good: a chunked request, a malformed head, an upgrade', async (t) => {
  const upstream = await recorder();
  const inside = await recorder();
  inside.server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.on('data', (d) => socket.write(`echo:${d}`));
  });
  t.teardown(() => (upstream.server.close(), inside.server.close()));
  const { port } = await relayFor(inside.server, () => upstream.port);

  const chunked = `POST /session/grid-1/url HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`;
  const first = await talk(port, [chunked, get('/session/grid-1/title')], 2);
  t.same(bodies(first.text).map((b) => b.value.body), ['hello', ''], 'node:http read the chunked body');
  t.same(inside.seen.map((s) => s.url), ['/session/grid-1/url', '/session/grid-1/title'], 'and the rest of that connection');
  t.equal(upstream.seen.length, 0);

  const bad = await talk(port, ['GET /session/grid-1/title HTTP/1.1\r\nno colon here\r\n\r\n'], 1);
  t.match(bad.text, /^HTTP\/1\.1 400 /, 'a malformed head: node:http answers 400');

  const upgraded = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString();
      if (text.includes('\r\n\r\n') && !text.includes('echo')) socket.write('ping');
      if (text.includes('echo:ping')) (socket.destroy(), resolve(text));
    });
    socket.write(`GET /session/grid-1/se/bidi HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`);
  });
  t.match(upgraded, /^HTTP\/1\.1 101 /, 'an upgrade reaches the server, and bytes flow both ways after it');
});

t.test('a client that leaves while the server is still answering: the server sees its connection close', async (t) => {
  let closedSeen: () => void;
  const closed = new Promise<void>((r) => (closedSeen = r));
  const inside = await recorder((req, body, res) => res.on('close', () => closedSeen()));
  t.teardown(() => (inside.server.closeAllConnections(), inside.server.close()));
  const { port } = await relayFor(inside.server, () => 1);
  const socket = connect(port, '127.0.0.1');
  socket.write(post('/session', '{}'));
  await new Promise((r) => setTimeout(r, 200));
  socket.destroy();
  await closed;
  t.pass('the waiting answer was closed: the grid can give back what it held');
});

t.test('an idle kept-alive client connection is closed; one waiting for a slow answer is not', async (t) => {
  const inside = await recorder((req, body, res) => {
    const out = '{"value":null}';
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out), req.url === '/slow' ? 600 : 0);
  });
  t.teardown(() => inside.server.close());
  const { port } = await relayFor(inside.server, () => 1, [], { idleMs: 200 });
  const slow = await talk(port, [get('/slow')], 1);
  t.match(slow.text, /^HTTP\/1\.1 200 /, 'an answer three idle periods late still arrives');
  const started = Date.now();
  const closed = await new Promise<number>((resolve) => {
    slow.socket.once('close', () => resolve(Date.now() - started));
    if (slow.socket.destroyed) resolve(0);
  });
  t.ok(closed < 1000, `then, with nothing asked, the relay closed the connection (${closed} ms)`);
});

t.test('a head that does not arrive whole within the head timeout: 408 and closed; one that does is served', async (t) => {
  const inside = await recorder();
  t.teardown(() => inside.server.close());
  const { port } = await relayFor(inside.server, () => 1, [], { headTimeoutMs: 300 });
  const started = Date.now();
  const [silent, partial] = await Promise.all([talk(port, [], 1), talk(port, ['GET /status HTTP/1.1\r\nHost: x\r\n'], 1)]);
  for (const [what, answer] of [['a silent connection', silent], ['half a head', partial]] as const) {
    t.match(answer.text, /^HTTP\/1\.1 408 Request Timeout\r\n/, `${what}: 408`);
    t.ok(answer.closed, `${what}: closed`);
  }
  t.ok(Date.now() - started < 3000, `both within the timeout and some slack (${Date.now() - started} ms)`);
  const served = await talk(port, [get('/status')], 1);
  t.match(served.text, /^HTTP\/1\.1 200 /, 'a whole head in time is served');
});

t.test('slow request heads are capped per client address; prompt clients from the same address are always served', async (t) => {
  const inside = await recorder();
  t.teardown(() => inside.server.close());
  const { port } = await relayFor(inside.server, () => 1, [], { perClient: 2, slowMs: 200, headTimeoutMs: 1500 });
  const started = Date.now();
  const half = 'GET /status HTTP/1.1\r\nHost: x\r\n';
  const slow = [talk(port, [half], 1), talk(port, [half], 1)];
  await new Promise((r) => setTimeout(r, 400)); // both are slow now: the address has its cap
  const third = talk(port, [half], 1);
  // meanwhile clients that send whole requests at once, from the same address, many at a time
  const prompt = await Promise.all(Array.from({ length: 20 }, (_v, i) => talk(port, [get(`/p${i}`)], 1)));
  t.ok(prompt.every((p) => /^HTTP\/1\.1 200 /.test(p.text)), 'twenty prompt clients from the capped address: all served');
  const refused = await third;
  t.match(refused.text, /^HTTP\/1\.1 429 Too Many Requests\r\n/, 'a third slow head from the address: 429');
  t.match(refused.text, /127\.0\.0\.1 already has 2 connections whose request head is incomplete/);
  t.ok(refused.closed);
  const timedOut = await Promise.all(slow);
  t.ok(timedOut.every((a) => /^HTTP\/1\.1 408 /.test(a.text) && a.closed), 'the two counted slow heads: 408 at the head timeout, closed');
  t.ok(Date.now() - started >= 1500, 'not before the head timeout');
  await until('the count drops as slow heads end', async () => /^HTTP\/1\.1 200 /.test((await talk(port, [half, '\r\n'], 1)).text), 5000);
  const slowAgain = await talk(port, ['GET /late HTTP/1.1\r\n', 'Host: x\r\n', '\r\n'], 1);
  t.match(slowAgain.text, /^HTTP\/1\.1 200 /, 'a head sent in pieces that still arrives whole in time is served');
});

t.test('behind a trusted proxy, slow heads count against the client its X-Forwarded-For names', async (t) => {
  const inside = await recorder();
  t.teardown(() => inside.server.close());
  const trusted = trustedProxies(['127.0.0.0/8']);
  const { port } = await relayFor(inside.server, () => 1, [], { perClient: 1, slowMs: 200, headTimeoutMs: 1200, trusted });
  const from = (client: string) => `GET /status HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9, ${client}\r\n`;
  const a = talk(port, [from('198.51.100.1')], 1);
  const b = talk(port, [from('198.51.100.2')], 1);
  await new Promise((r) => setTimeout(r, 400));
  const a2 = await talk(port, [from('198.51.100.1')], 1);
  t.match(a2.text, /^HTTP\/1\.1 429 /, 'a second slow head of the same client behind the proxy: 429');
  t.match(a2.text, /198\.51\.100\.1 already has 1/, 'named by the address the proxy forwarded');
  const [ta, tb] = await Promise.all([a, b]);
  t.ok([ta, tb].every((x) => /^HTTP\/1\.1 408 /.test(x.text)), 'two clients behind one proxy address: one slow head each, both within the cap (408 at the timeout)');
});

t.test('the client of a request: X-Forwarded-For is believed from trusted proxies only, its last untrusted address', async (t) => {
  const none = trustedProxies([]);
  const lb = trustedProxies(['10.0.0.0/8', '192.0.2.7', '::1']);
  t.equal(realClient('10.1.2.3', '198.51.100.1', none), '10.1.2.3', 'no trusted proxies: the peer');
  t.equal(realClient('203.0.113.5', '198.51.100.1', lb), '203.0.113.5', 'an untrusted peer: its header is ignored');
  t.equal(realClient('10.1.2.3', '198.51.100.1, 10.9.9.9', lb), '198.51.100.1', 'trusted hops are skipped from the right');
  t.equal(realClient('::ffff:192.0.2.7', 'spoofed, 198.51.100.4', lb), '198.51.100.4', 'an IPv4-mapped peer; what the client itself wrote first is not believed');
  t.equal(realClient('::1', ['198.51.100.1', '198.51.100.2'], lb), '198.51.100.2', 'repeated header lines');
  t.equal(realClient('10.1.2.3', undefined, lb), '10.1.2.3', 'no header: the peer');
});
