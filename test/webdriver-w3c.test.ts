// Bad input gets the W3C error shape {value:{error,message,stacktrace}} with
// its HTTP status, is logged with its code, and breaks nothing: malformed
// JSON, invalid or unmatched capabilities, an unknown session id, a truncated
// request, unknown paths and methods, a missing token. Also W3C matching itself.
import { connect } from 'node:net';
import t, { type Test } from 'tap';
import { readLog } from '../plugins/webdriver/session/log.ts';
import { capabilitySets, firstMatch, matches } from '../plugins/webdriver/session/capabilities.ts';
import { W3CError } from '../plugins/webdriver/errors.ts';
import { freePort } from './support/redis.ts';
import { newSessionBody, startEmbeddedGrid, w3c, type W3CAnswer } from './support/webdriver.ts';

t.test('W3C capability processing and matching', async (t) => {
  const offer = { platformName: 'linux', browsers: ['chrome::156.0.8078.108'] };
  const sets = capabilitySets({ capabilities: { alwaysMatch: { browserName: 'chrome' }, firstMatch: [{ browserVersion: '99' }, { browserVersion: '156', 'goog:chromeOptions': {} }] } });
  t.same(sets, [{ browserName: 'chrome', browserVersion: '99' }, { browserName: 'chrome', browserVersion: '156', 'goog:chromeOptions': {} }], 'alwaysMatch merged into each firstMatch');
  t.same(firstMatch(sets, new Map([['o1', offer]]))?.caps.browserVersion, '156', 'the first set that matches wins');
  t.same(capabilitySets({ capabilities: {} }), [{}], 'no alwaysMatch and no firstMatch: one empty set');
  t.ok(matches({ browserName: 'chrome', browserVersion: '156.0' }, offer), 'browserVersion is a prefix');
  t.notOk(matches({ browserName: 'firefox' }, offer), 'browserName must be equal');
  t.notOk(matches({ platformName: 'windows' }, offer));
  t.ok(matches({ platformName: 'LINUX' }, offer), 'platformName compares case-insensitively');
  t.ok(matches({ platformName: 'mac' }, { ...offer, platformName: 'any' }), 'an orchestrator offering any takes every platform');
  t.ok(matches({ browserName: 'chrome', 'moz:firefoxOptions': {}, 'goog:chromeOptions': { args: [] } }, offer), 'extension capabilities take no part');
  t.ok(matches({ browserName: 'chrome', webSocketUrl: true, unhandledPromptBehavior: 'ignore' }, offer), 'WebdriverIO 9 capabilities match');
  const refuse = (body: unknown) => t.throws(() => capabilitySets(body), W3CError);
  refuse({});
  refuse({ capabilities: { alwaysMatch: { browserName: 'chrome' }, firstMatch: [{ browserName: 'chrome' }] } });
  refuse({ capabilities: { alwaysMatch: { colour: 'red' } } });
  refuse({ capabilities: { firstMatch: [] } });
  refuse({ capabilities: { alwaysMatch: { pageLoadStrategy: 'fast' } } });
  refuse({ capabilities: { alwaysMatch: { timeouts: { implicit: -1 } } } });
});

const port = await freePort();
const { backend, page } = await startEmbeddedGrid(t, { options: { proxy: { port, token: 'sekret', bodyTimeout: 1, bodyLimit: 65536 }, api: { port: 0 }, orchestrator: { slots: 1 }, timeouts: { queue: 2, sessionTermination: 2 }, manager: { queueTimeout: 'slot' } } });
// queueTimeout=slot: the 2 s queue bounds only the wait for a slot, so the first session's start-up (slow on a loaded machine) is not cut short by it
const base = `http://127.0.0.1:${port}`;
const auth = { authorization: 'Bearer sekret' };
const call = (method: string, path: string, body?: unknown) => w3c(base, method, path, body, auth);
const shape = (t: Test, answer: W3CAnswer, status: number, error: string) => {
  t.equal(answer.status, status, `HTTP ${status}`);
  t.equal(answer.body.value?.error, error, `error "${error}"`);
  t.type(answer.body.value?.message, 'string', 'a message');
  t.type(answer.body.value?.stacktrace, 'string', 'a stacktrace field');
};
/** The newest session's log codes, read through the grid's own keys. */
const lastSessionCodes = async () => {
  const ids = (await backend.send(['SMEMBERS', 'sessions.terminated'])) as string[];
  const newest = (await Promise.all(ids.map(async (id) => [id, (await backend.send(['HGET', `session:${id}:status`, 'queuedAt'])) as string] as const))).sort((a, b) => b[1].localeCompare(a[1]))[0]!;
  const ctx = { backend, keys: { sessionLog: ({ sessionId }: { sessionId: string }) => `session:${sessionId}:log` } } as never;
  return (await readLog(ctx, newest[0])).map((e) => e.code);
};

t.test('the token: missing → 401 in the W3C shape; Bearer and Basic (http://user:TOKEN@host) work', async (t) => {
  shape(t, await w3c(base, 'GET', '/status'), 401, 'unauthorized');
  t.equal((await w3c(base, 'GET', '/status', undefined, auth)).status, 200);
  t.equal((await w3c(base, 'GET', '/status', undefined, { authorization: `Basic ${Buffer.from('any:sekret').toString('base64')}` })).status, 200);
});

t.test('malformed JSON → 400 invalid argument, no session queued', async (t) => {
  const before = (await backend.send(['SCARD', 'sessions.terminated'])) as number;
  shape(t, await call('POST', '/session', '{"capabilities": {'), 400, 'invalid argument');
  t.equal(await backend.send(['SCARD', 'sessions.terminated']), before);
});

t.test('capabilities that are not W3C → 400 invalid argument, logged INVALIDCAP', async (t) => {
  shape(t, await call('POST', '/session', { capabilities: { alwaysMatch: { browserName: 'chrome', colour: 'red' } } }), 400, 'invalid argument');
  t.same(await lastSessionCodes(), ['QUEUED', 'INVALIDCAP']);
  shape(t, await call('POST', '/session', { desiredCapabilities: { browserName: 'chrome' } }), 400, 'invalid argument');
});

t.test('capabilities that match nothing → 500 session not created, logged QUNAVAILABLE', async (t) => {
  const answer = await call('POST', '/session', { capabilities: { alwaysMatch: { browserName: 'firefox' } } });
  shape(t, answer, 500, 'session not created');
  t.match(answer.body.value?.message, /no orchestrator can satisfy/);
  t.same(await lastSessionCodes(), ['QUEUED', 'QUNAVAILABLE']);
  shape(t, await call('POST', '/session', newSessionBody({ browserVersion: '1.' })), 500, 'session not created');
});

t.test('an unknown session id → 404 invalid session id, for commands and DELETE alike', async (t) => {
  shape(t, await call('GET', '/session/00000000-0000-4000-8000-000000000000/title'), 404, 'invalid session id');
  shape(t, await call('DELETE', '/session/nope'), 404, 'invalid session id');
  shape(t, await call('POST', '/session/nope/url', { url: 'http://example.com' }), 404, 'invalid session id');
});

t.test('capabilities nested 5,000 deep → 400 invalid argument (not a stack overflow)', async (t) => {
  const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
  const answer = await call('POST', '/session', `{"capabilities":{"alwaysMatch":{"browserName":"chrome","goog:chromeOptions":{"prefs":${deep}}}}}`);
  shape(t, answer, 400, 'invalid argument');
  t.match(answer.body.value?.message, /nests \d+ levels deep/);
  const arrays = await call('POST', '/session', `{"capabilities":{"firstMatch":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`);
  shape(t, arrays, 400, 'invalid argument');
});

t.test('a session id that is not one (a ":" in it) → 400 invalid argument, naming no internal key', async (t) => {
  for (const id of ['a:b', 'x:session:1:upstream', '%3A']) {
    const answer = await call('GET', `/session/${id}/title`);
    shape(t, answer, 400, 'invalid argument');
    t.notMatch(answer.body.value?.message, /\{sessionId\}|pattern/i, `${id}: no internal key pattern in the message`);
  }
  shape(t, await call('DELETE', '/session/a:b'), 400, 'invalid argument');
});

t.test('a body over proxy.bodyLimit → 413 with a W3C error, whether announced or chunked', async (t) => {
  const big = JSON.stringify({ url: 'x'.repeat(70_000) });
  const announced = await call('POST', '/session/00000000-0000-4000-8000-000000000000/url', big);
  t.equal(announced.status, 413);
  t.equal(announced.body.value?.error, 'invalid argument');
  t.match(announced.body.value?.message, /larger than the limit of 65536 bytes \(proxy\.bodyLimit\)/);
  const chunked = await fetch(`${base}/session`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(big)), c.close()) }),
    duplex: 'half',
  } as RequestInit);
  t.equal(chunked.status, 413, 'a chunked body over the limit too');
  t.equal(((await chunked.json()) as W3CAnswer['body']).value?.error, 'invalid argument');
  t.equal((await call('GET', '/status')).status, 200, 'the proxy goes on');
});

t.test('unknown paths and methods: unknown command 404, unknown method 405', async (t) => {
  shape(t, await call('GET', '/nowhere'), 404, 'unknown command');
  shape(t, await call('GET', '/session'), 405, 'unknown method');
});

/** Sends raw bytes; resolves with the first whole response, or what came before the server closed (or `waitMs` passed). */
function raw(bytes: string, halfClose: boolean, waitMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = () => {
      socket.destroy();
      resolve(answer);
    };
    socket.on('data', (d) => {
      answer += d.toString();
      const end = answer.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(answer)?.[1] ?? NaN);
      if (end !== -1 && Buffer.byteLength(answer.slice(end + 4)) >= length) done();
    });
    socket.on('close', done);
    socket.on('error', done);
    setTimeout(done, waitMs);
    socket.write(bytes);
    if (halfClose) socket.end();
  });
}

t.test('a truncated request: a body that stalls → 408, one cut short by the client → 400, both in the W3C shape', async (t) => {
  const body = '{"capabilities": {"alwaysMa';
  const head = `POST /session HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer sekret\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
  const started = Date.now();
  const answer = await raw(head + body, false);
  t.match(answer, /^HTTP\/1\.1 408 /, `answered 408 after the body stalled (${Date.now() - started} ms)`);
  const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as W3CAnswer['body'];
  t.equal(json.value?.error, 'invalid argument');
  t.match(json.value?.message, /truncated request/);
  const cut = await raw(head + body, true, 5000);
  t.match(cut, /^HTTP\/1\.1 400 /, 'a client that half-closes mid-body gets the same 400');
});

t.test('nothing crashed: a queue timeout is session not created + QTIMEOUT, and a real session still works', async (t) => {
  const status = await call('GET', '/status');
  t.equal(status.body.value?.ready, true, '/status: ready');
  const created = await call('POST', '/session', newSessionBody());
  t.equal(created.status, 200, 'the one slot: a session');
  const id = created.body.value!.sessionId!;
  // the session is used while the second client waits: its idle timeout is as short as the queue's
  const keepBusy = setInterval(() => void call('GET', `/session/${id}/title`), 400);
  const waiting = await call('POST', '/session', newSessionBody());
  clearInterval(keepBusy);
  shape(t, waiting, 500, 'session not created');
  t.match(waiting.body.value?.message, /queue timeout \(2 s\)/);
  t.same(await lastSessionCodes(), ['QUEUED', 'QTIMEOUT'], 'QTIMEOUT is in its log');
  t.equal((await call('POST', `/session/${id}/url`, { url: `${page.url}/still` })).status, 200);
  t.equal((await call('GET', `/session/${id}/title`)).body.value, 'coord /still');
  t.equal((await call('DELETE', `/session/${id}`)).status, 200);
  shape(t, await call('GET', `/session/${id}/title`), 404, 'invalid session id');
});

t.test('the proxy counted requests per method and status, and bytes, into the metrics keys', async (t) => {
  await new Promise((r) => setTimeout(r, 1500)); // one flush interval
  const hash = async (key: string) => {
    const flat = (await backend.send(['HGETALL', key])) as string[];
    return Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, Number(flat[i + 1])]])));
  };
  const post = await hash('metrics:http:requestsTotal:POST');
  t.ok(post['400']! >= 3, `POST 400: ${post['400']}`);
  t.ok(post['500']! >= 3, `POST 500: ${post['500']}`);
  t.ok(post['200']! >= 2, `POST 200: ${post['200']}`);
  t.ok((await hash('metrics:http:requestsTotal:GET'))['404']! >= 2);
  const bytes = await hash('metrics:http:net.bytes.total');
  t.ok(bytes.in! > 100 && bytes.out! > 1000, `bytes in ${bytes.in}, out ${bytes.out}`);
});
