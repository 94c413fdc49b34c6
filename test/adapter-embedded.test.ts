// The embedded backend against the shared adapter suite, plus what only it promises:
// backends of one embedded:// name share a dataset, other names do not.
import { createHash, randomUUID } from 'node:crypto';
import t from 'tap';
import { ConnectionError, ReplyError, type PubSubMessage, type ScriptSource } from '../core/backend.ts';
import { UrlError } from '../core/url.ts';
import { adapterSuite } from '../conformance/adapter-suite.ts';
import { createEmbeddedBackend } from '../adapters/embedded.ts';
import { createBackend } from '../adapters/index.ts';

const unique = () => randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const make = (name: string) => createEmbeddedBackend({ url: `embedded://${name}` });

// One dataset for the whole suite, as one server would be: each subtest's backend is a new client of it.
const suiteDataset = `suite-${unique()}`;
await adapterSuite(t, { name: 'embedded', make: () => make(suiteDataset) });

t.test('backends of one name share keys, scripts, messages and wake-ups', async (t) => {
  const name = `shared-${unique()}`;
  const a = make(name);
  const b = make(name);
  t.equal(await a.send(['SET', 'k', 'from a']), 'OK');
  t.equal(await b.send(['GET', 'k']), 'from a', 'b reads what a wrote');

  const got: PubSubMessage[] = [];
  const sub = await b.subscriber();
  sub.onMessage((m) => got.push(m));
  await sub.subscribe('news');
  await sub.psubscribe('room:*');
  t.equal(await a.send(['PUBLISH', 'news', 'hello']), 1, 'PUBLISH on a counts the subscriber made by b');
  await a.send(['PUBLISH', 'room:1', 'hi']);
  await sleep(20);
  t.same(got, [{ channel: 'news', message: 'hello' }, { channel: 'room:1', message: 'hi', pattern: 'room:*' }], 'b heard both');

  const conn = await b.blocking();
  const pop = conn.send(['BLPOP', 'jobs', 5]);
  await sleep(20);
  await a.send(['RPUSH', 'jobs', 'j1']);
  t.same(await pop, ['jobs', 'j1'], "a's push woke b's blocking pop");

  const lua = `return 'shared ${name}'`;
  const script: ScriptSource = { name: 'test/shared', lua, sha: createHash('sha1').update(lua).digest('hex') };
  t.equal(await a.evalScript(script, [], []), `shared ${name}`);
  t.equal(await b.send(['EVALSHA', script.sha, 0]), `shared ${name}`, 'a script loaded through a runs by SHA on b');
  await a.close();
  await b.close();
});

t.test('backends of different names share nothing', async (t) => {
  const a = make(`apart-a-${unique()}`);
  const b = make(`apart-b-${unique()}`);
  await a.send(['SET', 'k', 'v']);
  t.equal(await b.send(['GET', 'k']), null, 'keys stay in their dataset');
  const got: PubSubMessage[] = [];
  const sub = await b.subscriber();
  sub.onMessage((m) => got.push(m));
  await sub.subscribe('news');
  t.equal(await a.send(['PUBLISH', 'news', 'hello']), 0, 'nobody listens in the other dataset');
  await sleep(20);
  t.same(got, [], 'no message crosses datasets');
  await a.send(['EVAL', "return 'x'", 0]);
  const sha = createHash('sha1').update("return 'x'").digest('hex');
  await t.rejects(b.send(['EVALSHA', sha, 0]), { code: 'NOSCRIPT' }, 'scripts stay in their dataset');
  await a.close();
  await b.close();
});

t.test('no URL means embedded://default, and createBackend picks the embedded adapter for it', async (t) => {
  const plain = createEmbeddedBackend({});
  t.equal(plain.displayUrl, 'embedded://default');
  t.equal(plain.name, 'embedded');
  t.same(plain.capabilities, { cluster: false, streamGroups: true, expiry: true, reconnect: false });
  const viaIndex = await createBackend({});
  t.equal(viaIndex.name, 'embedded');
  const key = `default-check-${unique()}`;
  await plain.send(['SET', key, 'v']);
  t.equal(await viaIndex.send(['GET', key]), 'v', 'both are the default dataset');
  await viaIndex.send(['DEL', key]);
  await plain.close();
  await viaIndex.close();
});

t.test('a Redis URL is refused with one clear error', async (t) => {
  t.throws(() => createEmbeddedBackend({ url: 'redis://user:secret@host:6379' }), UrlError);
  try {
    createEmbeddedBackend({ url: 'redis://user:secret@host:6379' });
  } catch (error) {
    t.match((error as Error).message, /embedded:\/\/<name>/, 'says what is expected');
    t.notMatch((error as Error).message, /secret/, 'does not print the password');
  }
});

t.test('closing one backend leaves the dataset and its other backends working', async (t) => {
  const name = `close-${unique()}`;
  const a = make(name);
  const b = make(name);
  await a.send(['SET', 'k', 'v']);
  await a.close();
  await t.rejects(a.send(['GET', 'k']), ConnectionError, 'a closed backend refuses commands');
  await t.rejects(a.subscriber(), ConnectionError);
  t.equal(await b.send(['GET', 'k']), 'v', 'the other backend still works');
  const again = make(name);
  t.equal(await again.send(['GET', 'k']), 'v', 'a new backend of the name finds the data');
  await b.close();
  await again.close();
});

t.test('a blocking call still waiting rejects with ConnectionError when its connection closes', async (t) => {
  const b = make(`bclose-${unique()}`);
  const conn = await b.blocking();
  const pop = conn.send(['BLPOP', 'nothing', 0]);
  await sleep(20);
  await conn.close();
  await t.rejects(pop, ConnectionError);
  await t.rejects(conn.send(['BLPOP', 'nothing', 1]), ConnectionError, 'and refuses new calls');
  t.equal(await b.send(['PING']), 'PONG', 'the backend itself is still open');
  await b.close();
});

t.test('BLPOP with timeout 0 waits until something is pushed', async (t) => {
  const b = make(`forever-${unique()}`);
  const conn = await b.blocking();
  let done = false;
  const pop = conn.send(['BLPOP', 'q', 0]).then((r) => ((done = true), r));
  await sleep(150);
  t.notOk(done, 'still waiting after 150 ms');
  await b.send(['LPUSH', 'q', 'x']);
  t.same(await pop, ['q', 'x']);
  await b.close();
});

t.test('XREADGROUP BLOCK is woken by an XADD', async (t) => {
  const b = make(`xgroup-${unique()}`);
  await b.send(['XGROUP', 'CREATE', 's', 'g', '$', 'MKSTREAM']);
  const conn = await b.blocking();
  const started = performance.now();
  t.equal(await conn.send(['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 100, 'STREAMS', 's', '>']), null, 'null after its timeout');
  t.ok(performance.now() - started >= 90, 'it waited');
  const read = conn.send(['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 5000, 'STREAMS', 's', '>']);
  await sleep(20);
  const id = await b.send(['XADD', 's', '*', 'n', '1']);
  t.same(await read, [['s', [[id, ['n', '1']]]]]);
  t.equal(((await b.send(['XPENDING', 's', 'g'])) as unknown[])[0], 1, 'the entry is pending for the consumer');
  await b.close();
});

t.test('SCAN stays exact while keys change between pages', async (t) => {
  const b = make(`scan-${unique()}`);
  const keys = Array.from({ length: 100 }, (_, i) => `k:${String(i).padStart(3, '0')}`);
  await b.pipeline(keys.map((k) => ['SET', k, 'v']));
  const seen: string[] = [];
  let cursor = '0';
  let page = 0;
  do {
    const [next, found] = (await b.send(['SCAN', cursor, 'MATCH', 'k:*', 'COUNT', 10])) as [string, string[]];
    seen.push(...found);
    cursor = next;
    if (page++ === 2) {
      await b.send(['DEL', 'k:099', 'k:098']); // not returned yet
      await b.send(['SET', 'k:new', 'v']); // added during the scan
    }
  } while (cursor !== '0');
  t.equal(new Set(seen).size, seen.length, 'no key twice');
  t.same(keys.filter((k) => !seen.includes(k)), ['k:098', 'k:099'], 'every key that lived through the scan, and none deleted before its page');
  await b.close();
});

t.test('SCRIPT LOAD, EXISTS and FLUSH', async (t) => {
  const b = make(`script-${unique()}`);
  const sha = await b.send(['SCRIPT', 'LOAD', 'return 7']);
  t.equal(sha, createHash('sha1').update('return 7').digest('hex'));
  t.same(await b.send(['SCRIPT', 'EXISTS', sha as string, 'ffff']), [1, 0]);
  t.equal(await b.send(['EVALSHA', sha as string, 0]), 7);
  t.equal(await b.send(['SCRIPT', 'FLUSH']), 'OK');
  await t.rejects(b.send(['EVALSHA', sha as string, 0]), { code: 'NOSCRIPT' }, 'flushed scripts are gone');
  await t.rejects(b.send(['SCRIPT', 'LOAD', 'return {{{']), { code: 'ERR', message: /Error compiling script/ }, 'a script that does not compile is refused');
  await b.close();
});

t.test('commands the embedded backend lacks, and malformed commands, fail with one clear reply error', async (t) => {
  const b = make(`unknown-${unique()}`);
  await t.rejects(b.send(['BITFIELD', 'k', 'GET', 'u8', 0]), { code: 'ERR', message: /unknown command 'BITFIELD' \(the embedded backend does not implement it\)/ });
  await t.rejects(b.send(['SUBSCRIBE', 'c']), { message: /subscriber\(\)/ }, 'pub/sub goes through subscriber()');
  await t.rejects(b.multi([['SET', 'a', '1'], ['NOPE']]), { code: 'EXECABORT' }, 'an unknown command discards a MULTI');
  t.equal(await b.send(['GET', 'a']), null, 'nothing of the discarded MULTI ran');
  for (const name of ['constructor', '__proto__', 'toString']) {
    await t.rejects(b.send([name, 'x']), { code: 'ERR', message: /unknown command/ }, `${name} is no command`);
  }
  await t.rejects(b.send([''] as never), ReplyError);
  await b.close();
});
