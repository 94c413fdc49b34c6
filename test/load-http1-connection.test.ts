// A user's own HTTP/1.1 connection (plugins/load-test/clients/http1-connection.ts)
// against a raw TCP server that writes exactly the bytes a test gives, split
// where the test says: how bodies are framed (length, chunked, none, until
// close), a 1xx before the final answer, when the connection is reused and
// when not, what a cut or malformed response gives, what a request may not
// carry; and TLS, verified against the trusted authorities.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Http1Connection, type Http1Request } from '../plugins/load-test/clients/http1-connection.ts';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { makeTlsFiles } from './support/tls-certs.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  error?: string;
}

/** Sends one request and gathers its answer as a step would see it. */
function send(connection: Http1Connection, request: Http1Request, abortAfterMs?: number): Promise<Answer> {
  return new Promise((resolve) => {
    let status = 0;
    let raw: string[] = [];
    const chunks: Buffer[] = [];
    connection.dispatch(request, {
      onConnect(abort) {
        if (abortAfterMs !== undefined) setTimeout(() => abort(new Error('aborted by test')), abortAfterMs);
      },
      onHeaders(code, headers) {
        status = code;
        raw = headers;
        return true;
      },
      onData(chunk) {
        chunks.push(Buffer.from(chunk));
        return true;
      },
      onComplete() {
        const headers: Record<string, string | string[]> = {};
        for (let i = 0; i < raw.length; i += 2) {
          const name = raw[i]!.toLowerCase();
          const seen = headers[name];
          headers[name] = seen === undefined ? raw[i + 1]! : [...[seen].flat(), raw[i + 1]!];
        }
        resolve({ status, headers, body: Buffer.concat(chunks).toString(), error: undefined });
      },
      onError(err) {
        resolve({ status, headers: {}, body: '', error: (err as NodeJS.ErrnoException).code ?? err.message });
      },
    });
  });
}

/**
 * A server that answers each request with the next of `replies`: an array of byte pieces written 5 ms apart
 * (then the connection is closed if the piece list ends with null). Records each request's text and connection.
 */
async function rawServer(t: Test, replies: (string | null)[][]) {
  const requests: { text: string; connection: number }[] = [];
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const id = ++connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    socket.on('data', async (data) => {
      buffered += data.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) !== -1) {
        const head = buffered.slice(0, end + 4);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        requests.push({ text: buffered.slice(0, end + 4 + length), connection: id });
        buffered = buffered.slice(end + 4 + length);
        const pieces = replies.shift() ?? ['HTTP/1.1 500 No Reply Left\r\ncontent-length: 0\r\n\r\n'];
        for (const piece of pieces) {
          if (piece === null) socket.end();
          else socket.write(Buffer.from(piece, 'latin1'));
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  return { origin: `http://127.0.0.1:${port}`, requests, connections: () => connections, sockets };
}

/** Every way of cutting `text` in two. */
function splits(text: string): string[][] {
  return Array.from({ length: text.length - 1 }, (_, i) => [text.slice(0, i + 1), text.slice(i + 1)]);
}

const run = promisify(execFile);
const get = (path = '/'): Http1Request => ({ method: 'GET', path });

t.test('bodies framed by length, chunks, nothing and the connection closing, read whole however the bytes arrive', async (t) => {
  const sized = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello';
  const chunked = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n\r\n3;ext=1\r\nhel\r\n2\r\nlo\r\n0\r\nx-trailer: t\r\n\r\n';
  const cases = [...splits(sized).map((p) => ({ pieces: p, body: 'hello' })), ...splits(chunked).map((p) => ({ pieces: p, body: 'hello' }))];
  const server = await rawServer(t, cases.map((c) => c.pieces));
  const connection = new Http1Connection(server.origin);
  for (const c of cases) {
    const answer = await send(connection, get());
    if (answer.status !== 200 || answer.body !== c.body) t.fail(`cut at ${c.pieces[0]!.length}: ${JSON.stringify(answer)}`);
  }
  t.pass(`${cases.length} responses cut at every byte: each read whole`);
  t.equal(server.connections(), 1, 'all on one connection, kept alive');
  const last = server.requests.at(-1)!.text;
  t.equal(last, `GET / HTTP/1.1\r\nhost: ${new URL(server.origin).host}\r\nconnection: keep-alive\r\n\r\n`, 'the request as written');

  const more = await rawServer(t, [
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n\r\n', '3\r\nhel\r\n', '2\r\nlo\r\n0\r\n\r\n'],
    ['HTTP/1.1 204 No Content\r\n\r\n'],
    ['HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n'], // HEAD: a length, no body
    ['HTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\n', 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfinal'],
    ['HTTP/1.0 200 OK\r\n\r\nuntil', ' closed', null],
    ['HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nnew'],
  ]);
  const c2 = new Http1Connection(more.origin);
  const cookies = await send(c2, get());
  t.same([cookies.body, cookies.headers['set-cookie']], ['hello', ['a=1', 'b=2']], 'chunks as they come; a repeated header twice');
  t.same([(await send(c2, get())).status, (await send(c2, get())).status], [204, 304], '204 and 304: no body, and the connection goes on');
  t.same(await send(c2, { method: 'HEAD', path: '/' }), { status: 200, headers: { 'content-length': '9' }, body: '', error: undefined }, 'HEAD: no body, whatever the length says');
  const hinted = await send(c2, get());
  t.same([hinted.status, hinted.body], [200, 'final'], 'a 103 first: the final response is the answer');
  t.equal(more.connections(), 1, 'one connection so far');
  t.same((await send(c2, get())).body, 'until closed', 'HTTP/1.0 without a length: the body runs until the connection closes');
  t.same((await send(c2, get())).body, 'new', 'the next request on a new connection');
  t.equal(more.connections(), 2);
});

t.test('when a connection is reused and when it is not', async (t) => {
  const server = await rawServer(t, [
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\na'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\nkeep-alive: timeout=1\r\n\r\nb'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nc'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nd'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\ne'],
  ]);
  const connection = new Http1Connection(server.origin);
  t.equal((await send(connection, get())).body, 'a');
  t.equal((await send(connection, get())).body, 'b');
  t.equal(server.connections(), 2, '"connection: close": the next request opens another');
  t.equal((await send(connection, get())).body, 'c');
  t.equal(server.connections(), 3, 'idle past the keep-alive hint (timeout=1: reuse within 0 s): not reused');
  t.equal((await send(connection, get())).body, 'd');
  t.equal(server.connections(), 3, 'within the default idle time: reused');
  for (const socket of server.sockets) socket.end(); // the server closes an idle connection
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal((await send(connection, get())).body, 'e', 'closed by the server while idle: the next request opens another');
  t.equal(server.connections(), 4);
  await connection.close();
});

t.test('cut, malformed and refused answers are errors; an abort ends the request at once', async (t) => {
  const server = await rawServer(t, [
    ['HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort', null],
    ['NOT HTTP AT ALL\r\n\r\n'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'],
    [], // no answer: the request is aborted
    ['HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nafter'],
  ]);
  const connection = new Http1Connection(server.origin);
  t.same((await send(connection, get())).error, 'UND_ERR_SOCKET', 'closed mid-body: "other side closed", as undici says it');
  t.same((await send(connection, get())).error, 'HPE_INVALID', 'not HTTP: an error, not a hang');
  t.equal((await send(connection, get())).body, 'ok', 'and the next request works');
  const started = performance.now();
  const aborted = await send(connection, get(), 50);
  t.same(aborted.error, 'aborted by test', 'an abort is the error the request hears');
  t.ok(performance.now() - started < 1000, 'at once');
  t.equal((await send(connection, get())).body, 'after', 'the connection it was on is dropped; the next request gets a new one');

  const refused = await new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
  t.equal((await send(new Http1Connection(`http://127.0.0.1:${refused}`), get())).error, 'ECONNREFUSED', 'nothing listening: ECONNREFUSED');
});

t.test('what a request carries: its headers and body, and no line breaks smuggled into them', async (t) => {
  const server = await rawServer(t, [['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n']]);
  const connection = new Http1Connection(server.origin);
  const host = new URL(server.origin).host;
  await send(connection, { method: 'POST', path: '/p?q=1', headers: { 'content-type': 'application/json', Host: 'evil', 'Content-Length': '99' }, body: '{"é":1}' });
  t.equal(
    server.requests[0]!.text,
    `POST /p?q=1 HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ncontent-length: 8\r\n\r\n${Buffer.from('{"é":1}').toString('latin1')}`,
    "its headers, the connection's own host and length (in bytes), its body",
  );
  t.match((await send(connection, { method: 'GET', path: '/', headers: { 'x-a': 'v\r\nx-injected: 1' } })).error, /invalid header "x-a"/, 'a line break in a header value: refused');
  t.match((await send(connection, { method: 'GET', path: '/ HTTP/1.1\r\nx: 1' })).error, /invalid request line/, 'a line break in the path: refused');
  t.equal(server.requests.length, 1, 'neither was sent');
});

t.test('https: verified against the trusted authorities', async (t) => {
  const tls = makeTlsFiles();
  t.teardown(() => tls.remove());
  const server = createTlsServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (req, res) => res.end(`tls ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const origin = `https://localhost:${(server.address() as { port: number }).port}`;
  const untrusted = await send(new Http1Connection(origin), get('/x'));
  t.match(untrusted.error, /CERT|SIGNATURE|SELF_SIGNED/, `a certificate no trusted authority signed: refused (${untrusted.error})`);
  // Trusted through NODE_EXTRA_CA_CERTS, in a process of its own (the trust store is read when a process starts): the built module.
  buildIfStale();
  const script = join(t.testdir(), 'trusted.mjs');
  writeFileSync(
    script,
    `import { Http1Connection } from ${JSON.stringify(join(root, 'dist/plugins/load-test/clients/http1-connection.js'))};
const connection = new Http1Connection(${JSON.stringify(origin)});
connection.dispatch({ method: 'GET', path: '/y' }, {
  onConnect() {}, onHeaders(status) { process.stdout.write(status + ' '); return true; },
  onData(chunk) { process.stdout.write(chunk); return true; },
  onComplete() { connection.close(); }, onError(err) { process.stdout.write('error ' + (err.code ?? err.message)); },
});`,
  );
  // Not spawnSync: the server answering it runs in this process.
  const trusted = await run(process.execPath, [script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.caFile }, encoding: 'utf8', timeout: 30_000 });
  t.equal(trusted.stdout, '200 tls /y', `trusted: answered over TLS (${trusted.stderr.slice(-300)})`);
});
