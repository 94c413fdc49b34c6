// The tests both Redis client adapters (ioredis, node-redis) must pass, against
// real redis-servers: the shared conformance suite on one server and on a
// 3-master cluster, then what only a networked adapter has — the EVALSHA
// fallback, reconnecting, passwords, unreachable URLs, TLS, cluster routing,
// and a process that can exit after close().
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { adapterSuite } from '../../conformance/adapter-suite.ts';
import {
  ConnectionError,
  ReplyError,
  type Backend,
  type BackendFactory,
  type BackendState,
  type Reply,
  type ScriptSource,
} from '../../core/backend.ts';
import { freePort, startCluster, startRedis, type RedisCluster, type RedisServer } from './redis.ts';
import { makeTlsFiles } from './tls-certs.ts';
import { until } from './until.ts';

export interface AdapterUnderTest {
  /** The adapter's name, as Backend.name reports it. */
  name: string;
  create: BackendFactory;
  /** The adapter's module and the factory's export name, for tests that run it in a child process. */
  module: URL;
  exportName: string;
}

export async function adapterCases(t: Test, adapter: AdapterUnderTest): Promise<void> {
  const server = await startRedis();
  t.teardown(() => server.stop());
  const cluster = await startCluster();
  t.teardown(() => cluster.stop());

  await t.test('conformance suite on one redis-server', (t) =>
    adapterSuite(t, { name: `${adapter.name} (server)`, make: () => adapter.create({ url: server.url }) }),
  );
  await t.test('conformance suite on a 3-master Redis Cluster', (t) =>
    adapterSuite(t, { name: `${adapter.name} (cluster)`, make: () => adapter.create({ url: cluster.url }) }),
  );
  await t.test('name, capabilities and displayUrl', (t) => describesItself(t, adapter, server, cluster));
  await t.test('evalScript sends EVALSHA first and EVAL after SCRIPT FLUSH', (t) => evalShaFallback(t, adapter, server));
  await t.test('a MULTI that EXEC refuses rejects with the reason and changes nothing', (t) => execAbort(t, adapter, server));
  await t.test('a pub/sub handler that throws is logged; the others still get the message', (t) => throwingHandler(t, adapter, server));
  await t.test('a server restart: commands work again, one reconnecting and one ready line', (t) => reconnects(t, adapter));
  await t.test('password URLs: AUTH works, the password is never shown', (t) => passwords(t, adapter));
  await t.test('an unreachable URL: ready() rejects with one line within ~5 s', (t) => unreachable(t, adapter));
  await t.test('rediss:// talks TLS and checks the certificate', (t) => tls(t, adapter));
  await t.test('cluster: routing by key, SCAN of every master, MULTI in one slot', (t) => clusterRouting(t, adapter, cluster));
  await t.test('after close() the process exits by itself', (t) => exitsAfterClose(t, adapter, server, cluster));
}

async function describesItself(t: Test, adapter: AdapterUnderTest, server: RedisServer, cluster: RedisCluster): Promise<void> {
  const single = adapter.create({ url: server.url.replace('redis://', 'redis://someone:hidden-pw@') });
  t.equal(single.name, adapter.name);
  t.same(single.capabilities, { cluster: false, streamGroups: true, expiry: true, reconnect: true });
  t.equal(single.displayUrl, server.url.replace('redis://', 'redis://someone:***@'), 'the password is masked');
  await single.close();
  for (const url of [cluster.url, cluster.url.replace('redis://', 'redis+cluster://').replace(/,.*/, '')]) {
    const b = adapter.create({ url });
    t.equal(b.capabilities.cluster, true, `${url} is a cluster`);
    await b.ready();
    t.equal(await b.send(['SET', `{describe}:${randomUUID()}`, 1]), 'OK', `${url} serves commands`);
    await b.close();
  }
  t.throws(() => adapter.create({ url: 'embedded://x' }), /needs a Redis URL/, 'an embedded URL is refused with one clear error');
  t.throws(() => adapter.create({ url: 'http://nope' }), /bad Redis URL/, 'a malformed URL is refused');
}

async function evalShaFallback(t: Test, adapter: AdapterUnderTest, server: RedisServer): Promise<void> {
  const b = adapter.create({ url: server.url });
  t.teardown(() => b.close());
  await b.ready();
  const script = scriptSource(`return {ARGV[1], KEYS[1]} -- ${randomUUID()}`);
  const key = `evalsha:${randomUUID()}`;
  /** How often the server was asked to run EVALSHA (run or refused) and EVAL. */
  const counts = async () => {
    const info = String(await b.send(['INFO', 'commandstats']));
    const stat = (cmd: string) => {
      const line = new RegExp(`cmdstat_${cmd}:([^\\r\\n]*)`).exec(info)?.[1] ?? '';
      return ['calls', 'rejected_calls']
        .map((field) => Number(new RegExp(`(?:^|,)${field}=(\\d+)`).exec(line)?.[1] ?? 0))
        .reduce((a, b) => a + b, 0);
    };
    return { evalsha: stat('evalsha'), eval: stat('eval') };
  };
  t.same(await b.evalScript(script, [key], ['first']), ['first', key], 'a script new to the server runs');
  const warm = await counts();
  t.same(await b.evalScript(script, [key], ['again']), ['again', key], 'it runs again');
  const cached = await counts();
  t.equal(cached.evalsha - warm.evalsha, 1, 'the second run is one EVALSHA');
  t.equal(cached.eval - warm.eval, 0, '… and no EVAL');

  t.equal(await b.send(['SCRIPT', 'FLUSH']), 'OK');
  t.same(await b.send(['SCRIPT', 'EXISTS', script.sha]), [0], 'the server forgot the script');
  t.same(await b.evalScript(script, [key], ['flushed']), ['flushed', key], 'after SCRIPT FLUSH it still runs');
  const flushed = await counts();
  t.equal(flushed.evalsha - cached.evalsha, 1, 'EVALSHA was tried first (and got NOSCRIPT)');
  t.equal(flushed.eval - cached.eval, 1, 'then EVAL sent the body');
  t.same(await b.send(['SCRIPT', 'EXISTS', script.sha]), [1], 'EVAL loaded it again, so EVALSHA works from now on');
}

async function execAbort(t: Test, adapter: AdapterUnderTest, server: RedisServer): Promise<void> {
  const b = adapter.create({ url: server.url });
  t.teardown(() => b.close());
  await b.ready();
  const key = `execabort:${randomUUID()}`;
  // Redis refuses an unknown command while queueing, then discards the whole transaction at EXEC.
  const outcome = await settle(b.multi([['SET', key, 'v'], ['NOSUCHCOMMAND', key], ['INCR', key]]));
  t.ok(outcome.error instanceof ReplyError, `rejects with ReplyError (${describe(outcome.error)})`);
  t.match((outcome.error as Error).message, /unknown command/i, 'naming the command Redis refused');
  t.equal(await b.send(['EXISTS', key]), 0, 'nothing of the transaction ran');
  t.same(await b.multi([['SET', key, 'v'], ['GET', key]]), ['OK', 'v'], 'the next MULTI works');
  await b.send(['DEL', key]);
}

async function throwingHandler(t: Test, adapter: AdapterUnderTest, server: RedisServer): Promise<void> {
  const lines: string[] = [];
  const b = adapter.create({ url: server.url, log: (line) => lines.push(line) });
  t.teardown(() => b.close());
  await b.ready();
  const channel = `throwing:${randomUUID()}`;
  const sub = await b.subscriber();
  const heard: string[] = [];
  sub.onMessage(() => {
    throw new Error('handler bug');
  });
  sub.onMessage((m) => heard.push(m.message));
  await sub.subscribe(channel);
  await b.send(['PUBLISH', channel, 'one']);
  await b.send(['PUBLISH', channel, 'two']);
  await until('both messages', () => heard.length === 2, 5000, 100);
  t.same(heard, ['one', 'two'], 'the other handler got every message, the connection kept delivering');
  t.equal(lines.filter((line) => line.includes('handler bug')).length, 2, 'each throw was logged once');
  t.equal(await b.send(['PING']), 'PONG', 'the backend still works');
}

async function reconnects(t: Test, adapter: AdapterUnderTest): Promise<void> {
  const server = await startRedis();
  t.teardown(() => server.stop());
  const lines: string[] = [];
  const b = adapter.create({ url: server.url, log: (line) => lines.push(line) });
  t.teardown(() => b.close());
  await b.ready();
  t.same(statesIn(lines), ['connecting', 'ready'], 'one line for connecting, one for ready');
  const states: BackendState[] = [];
  b.onState((state) => states.push(state));
  const sub = await b.subscriber();
  const heard: string[] = [];
  sub.onMessage((m) => heard.push(m.message));
  await sub.subscribe('restart:channel');
  const conn = await b.blocking();
  t.equal(await conn.send(['PING']), 'PONG', 'the blocking connection is up');

  const before = lines.length;
  await server.restart();
  t.equal(await within(15_000, b.send(['SET', 'restart:k', 'v']), 'SET after the restart'), 'OK', 'a command sent during the outage is answered after it');
  t.equal(await b.send(['GET', 'restart:k']), 'v', 'commands work again');
  await until('the ready line', () => statesIn(lines.slice(before)).includes('ready'), 10_000, 100);
  await sleep(500); // a second reconnect line, if one were coming, would show up now
  const after = lines.slice(before);
  t.same(statesIn(after), ['reconnecting', 'ready'], 'exactly one reconnecting line and one ready line');
  t.equal(after.length, 2, 'and nothing else was logged');
  t.same(states, ['reconnecting', 'ready'], 'onState heard the same two changes');
  for (const line of after) t.ok(line.includes(server.url), `the line names the URL: ${line}`);

  // The dedicated connections came back too: the subscriber resubscribed, the blocking one serves.
  await until(
    'a message to the subscriber after the restart',
    async () => {
      await b.send(['PUBLISH', 'restart:channel', 'after']);
      return heard.includes('after');
    },
    10_000,
    100,
  );
  t.ok(heard.includes('after'), 'the subscriber hears messages again');
  await b.send(['RPUSH', 'restart:list', 'x']);
  t.same(await within(10_000, conn.send(['BLPOP', 'restart:list', 5]), 'BLPOP after the restart'), ['restart:list', 'x'], 'the blocking connection serves again');
  await b.close();
  t.same(statesIn(lines.slice(before)), ['reconnecting', 'ready', 'closed'], 'close() adds one closed line');
}

async function passwords(t: Test, adapter: AdapterUnderTest): Promise<void> {
  const secret = `pw-${randomUUID()}`;
  const aliceSecret = `alice-${randomUUID()}`;
  const wrong = `wrong-${randomUUID()}`;
  const server = await startRedis({ args: ['--requirepass', secret, '--user', 'alice', 'on', `>${aliceSecret}`, '~*', '&*', '+@all'] });
  t.teardown(() => server.stop());
  const hostPort = `127.0.0.1:${server.port}`;
  const lines: string[] = [];
  const texts: string[] = []; // every message a user could see
  const log = (line: string) => lines.push(line);

  const b = adapter.create({ url: `redis://:${secret}@${hostPort}`, log });
  t.teardown(() => b.close());
  await b.ready();
  t.equal(await b.send(['SET', 'auth:k', 'v']), 'OK', 'the password URL authenticates');
  t.equal(await b.send(['ACL', 'WHOAMI']), 'default', 'as the default user');
  t.equal(b.displayUrl, `redis://:***@${hostPort}`, 'displayUrl masks the password');
  const sub = await b.subscriber();
  await sub.subscribe('auth:channel');
  const conn = await b.blocking();
  t.equal(await conn.send(['PING']), 'PONG', 'subscriber and blocking connections authenticate too');

  const alice = adapter.create({ url: `redis://alice:${aliceSecret}@${hostPort}`, log });
  t.teardown(() => alice.close());
  await alice.ready();
  t.equal(await alice.send(['ACL', 'WHOAMI']), 'alice', 'user:password@ logs in as that ACL user');
  t.equal(alice.displayUrl, `redis://alice:***@${hostPort}`);

  // A restart makes every connection authenticate again (and log about it).
  await server.restart();
  t.equal(await within(15_000, b.send(['GET', 'auth:k']), 'GET after the restart'), null, 'authenticated again after a restart');
  await until('both backends ready again', () => statesIn(lines).filter((s) => s === 'ready').length >= 4, 10_000, 100);

  const bad = adapter.create({ url: `redis://:${wrong}@${hostPort}`, log });
  const started = performance.now();
  const outcome = await settle(bad.ready());
  const took = performance.now() - started;
  t.ok(outcome.error instanceof ConnectionError, `a wrong password rejects ready() with ConnectionError (${describe(outcome.error)})`);
  t.ok(took < 6500, `within the 5 s limit (${Math.round(took)} ms)`);
  const message = (outcome.error as Error).message;
  texts.push(message);
  t.match(message, new RegExp(`^cannot reach Redis at redis://:\\*\\*\\*@${escape(hostPort)}: `), 'the message names the masked URL');
  t.match(message, /WRONGPASS|invalid|auth/i, 'and says why');
  const waiting = settle(bad.send(['PING']));
  await bad.close();
  const sent = await waiting;
  t.ok(sent.error instanceof Error, `a command sent to it fails, at the latest when it closes (${describe(sent.error)})`);
  texts.push(describe(sent.error));
  await b.close();
  await alice.close();

  t.ok(lines.length >= 6, 'state lines were logged');
  for (const text of [...lines, ...texts]) {
    t.notOk(text.includes(secret) || text.includes(aliceSecret) || text.includes(wrong), `no password in: ${text}`);
  }
}

async function unreachable(t: Test, adapter: AdapterUnderTest): Promise<void> {
  const ports = [await freePort(), await freePort()];
  const secret = `pw-${randomUUID()}`;
  const cases = [
    { what: 'a server', url: `redis://:${secret}@127.0.0.1:${ports[0]}`, shown: `redis://:***@127.0.0.1:${ports[0]}` },
    { what: 'a cluster', url: `redis://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`, shown: `redis://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}` },
  ];
  // ioredis's cluster probes swallow the socket error; it can only say that no node answered.
  const refused = /ECONNREFUSED|refused|no cluster node answered/i;
  for (const { what, url, shown } of cases) {
    const lines: string[] = [];
    const b = adapter.create({ url, log: (line) => lines.push(line) });
    const started = performance.now();
    const outcome = await settle(b.ready());
    const took = performance.now() - started;
    t.ok(outcome.error instanceof ConnectionError, `${what}: ConnectionError (${describe(outcome.error)})`);
    t.ok(took >= 4500 && took < 6500, `${what}: after trying for ~5 s (${Math.round(took)} ms)`);
    const message = (outcome.error as Error).message;
    t.match(message, new RegExp(`^cannot reach Redis at ${escape(shown)}: \\S`), `${what}: "cannot reach Redis at <masked url>: <reason>"`);
    t.match(message, refused, `${what}: the reason is the refused connection`);
    t.notMatch(message, /\n/, `${what}: one line`);
    t.notOk(message.includes(secret), `${what}: no password`);
    t.same(statesIn(lines), ['connecting'], `${what}: one log line while it keeps trying`);
    await b.close();
    t.same(statesIn(lines), ['connecting', 'closed'], `${what}: then closed`);
    await t.rejects(b.ready(), ConnectionError, `${what}: ready() after close() rejects`);
  }
}

async function tls(t: Test, adapter: AdapterUnderTest): Promise<void> {
  const files = makeTlsFiles();
  t.teardown(() => files.remove());
  const server = await startRedis({ tls: files });
  t.teardown(() => server.stop());
  t.match(server.url, /^rediss:\/\//);

  const b = adapter.create({ url: server.url, tls: { caFile: files.caFile } });
  t.teardown(() => b.close());
  await b.ready();
  t.equal(await b.send(['SET', 'tls:k', 'v']), 'OK', 'rediss:// with the CA: commands work');
  t.equal(await b.send(['GET', 'tls:k']), 'v');
  const sub = await b.subscriber();
  const heard: string[] = [];
  sub.onMessage((m) => heard.push(m.message));
  await sub.subscribe('tls:channel');
  await b.send(['PUBLISH', 'tls:channel', 'secure']);
  await until('the message over TLS', () => heard.includes('secure'), 5000, 100);
  t.same(heard, ['secure'], 'the subscriber connection uses TLS too');
  const conn = await b.blocking();
  await b.send(['RPUSH', 'tls:list', 'x']);
  t.same(await conn.send(['BLPOP', 'tls:list', 1]), ['tls:list', 'x'], 'and the blocking connection');
  await b.close();

  const unverified = adapter.create({ url: server.url });
  const outcome = await settle(unverified.ready());
  t.ok(outcome.error instanceof ConnectionError, `without the CA the certificate is refused (${describe(outcome.error)})`);
  t.match((outcome.error as Error).message, /certificate/i, 'the message says it is the certificate');
  await unverified.close();

  const insecure = adapter.create({ url: server.url, tls: { rejectUnauthorized: false } });
  await insecure.ready();
  t.equal(await insecure.send(['PING']), 'PONG', 'rejectUnauthorized: false accepts it');
  await insecure.close();

  const plain = adapter.create({ url: server.url.replace('rediss://', 'redis://') });
  t.ok((await settle(plain.ready())).error instanceof ConnectionError, 'redis:// (no TLS) does not get through to a TLS port');
  await plain.close();

  const missing = `${files.caFile}.missing`;
  t.throws(
    () => adapter.create({ url: server.url, tls: { caFile: missing } }),
    { name: 'ConnectionError', message: new RegExp(`TLS CA file "${escape(missing)}"`) },
    'a missing CA file is one clear error naming it',
  );
}

async function clusterRouting(t: Test, adapter: AdapterUnderTest, cluster: RedisCluster): Promise<void> {
  const b = adapter.create({ url: cluster.url });
  const direct = new Map<number, Backend>(cluster.ports.map((port) => [port, adapter.create({ url: `redis://127.0.0.1:${port}` })]));
  t.teardown(async () => {
    await b.close();
    for (const node of direct.values()) await node.close();
  });
  await b.ready();
  const run = randomUUID().slice(0, 8);
  const keys = Array.from({ length: 60 }, (_, i) => `route:${run}:${i}`);

  const written = await b.pipeline(keys.map((k, i) => ['SET', k, i]));
  t.same(written, keys.map(() => 'OK'), 'a pipeline over keys of many slots is routed key by key');
  const owners = await Promise.all(keys.map(async (k) => ownerPort(await b.send(['CLUSTER', 'SLOTS']), (await b.send(['CLUSTER', 'KEYSLOT', k])) as number)));
  t.equal(new Set(owners).size, 3, 'the keys are spread over all three masters');
  const onOwners = await Promise.all(keys.map((k, i) => direct.get(owners[i]!)!.send(['GET', k])));
  t.same(onOwners, keys.map((_, i) => String(i)), 'each key was written on the master that owns its slot');
  t.same(await Promise.all(keys.map((k) => b.send(['GET', k]))), keys.map((_, i) => String(i)), 'and is read back through the cluster');

  const scanned: string[] = [];
  for await (const key of b.scan(`route:${run}:*`, 7)) scanned.push(key);
  t.same(scanned.sort(), [...keys].sort(), 'scan sees the keys of every master, each once');

  // Container commands list no key in Redis's command table: the key follows the subcommand.
  const streams = keys.slice(0, 12).map((k) => `${k}:stream`);
  t.same(await Promise.all(streams.map((s) => b.send(['XGROUP', 'CREATE', s, 'g', '$', 'MKSTREAM']))), streams.map(() => 'OK'), 'XGROUP CREATE goes to the node of its key');
  const again = await Promise.all(streams.map((s) => b.send(['XGROUP', 'CREATE', s, 'g', '$']).then(() => 'created twice', (e: Error) => e.message.split(' ')[0])));
  t.same(again, streams.map(() => 'BUSYGROUP'), "a second XGROUP CREATE gets Redis's BUSYGROUP from that node, not a redirection");
  t.same(await Promise.all(streams.map((s) => b.send(['OBJECT', 'ENCODING', s]))), streams.map(() => 'stream'), 'OBJECT ENCODING too');
  t.ok((await Promise.all(streams.map((s) => b.send(['MEMORY', 'USAGE', s])))).every((n) => typeof n === 'number' && n > 0), 'MEMORY USAGE too');
  await b.pipeline(streams.map((s) => ['DEL', s]));

  const read = scriptSource(`return redis.call('GET', KEYS[1]) -- ${run}`);
  const scripted = await Promise.all(keys.slice(0, 12).map((k) => b.evalScript(read, [k], [])));
  t.same(scripted, keys.slice(0, 12).map((_, i) => String(i)), 'evalScript runs on the node of KEYS[1]');

  const tag = `{${run}}`;
  t.same(
    await b.multi([['SET', `${tag}:a`, 1], ['INCR', `${tag}:a`], ['SET', `${tag}:b`, 'x'], ['MGET', `${tag}:a`, `${tag}:b`]]),
    ['OK', 2, 'OK', ['2', 'x']],
    'MULTI with hash-tagged keys runs in their slot',
  );
  const spread = keys.filter((_, i) => owners[i] !== owners[0]).slice(0, 1).concat(keys[0]!);
  await t.rejects(b.multi(spread.map((k) => ['GET', k])), 'MULTI over keys of different slots is refused');
  await b.pipeline([['DEL', `${tag}:a`, `${tag}:b`], ...keys.map((k) => ['DEL', k] as ['DEL', string])]);
}

async function exitsAfterClose(t: Test, adapter: AdapterUnderTest, server: RedisServer, cluster: RedisCluster): Promise<void> {
  const cases = [
    { what: 'a server', url: server.url, reachable: true },
    { what: 'a cluster', url: cluster.url, reachable: true },
    { what: 'an unreachable server', url: `redis://127.0.0.1:${await freePort()}`, reachable: false },
  ];
  for (const { what, url, reachable } of cases) {
    const result = await runChild(adapter, url, reachable);
    t.equal(result.code, 0, `${what}: the child ran to the end (${result.output.trim().replace(/\n/g, ' | ')})`);
    t.ok(result.exitAfterClose !== undefined && result.exitAfterClose < 1500, `${what}: exited ${Math.round(result.exitAfterClose ?? -1)} ms after close() with nothing left running`);
  }
}

/**
 * Runs the adapter in a child process: open, use every kind of connection
 * (leaving a BLPOP waiting), close, and see how soon the process exits by itself.
 */
function runChild(adapter: AdapterUnderTest, url: string, reachable: boolean): Promise<{ code: number | null; output: string; exitAfterClose?: number }> {
  const program = `
    const { ${adapter.exportName}: create } = await import(${JSON.stringify(adapter.module.href)});
    const b = create({ url: process.env.COORD_TEST_URL });
    if (process.env.COORD_TEST_REACHABLE === '1') {
      await b.ready();
      const sub = await b.subscriber();
      await sub.subscribe('exit:channel');
      await sub.psubscribe('exit:*');
      const conn = await b.blocking();
      conn.send(['BLPOP', 'exit:list', 0]).catch(() => undefined);
      await b.send(['SET', '{exit}:k', 'v']);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } else {
      await b.ready().then(() => console.log('unexpectedly ready'), () => console.log('ready() rejected'));
    }
    await b.close();
    console.log('closed');
  `;
  // The TypeScript loader tap runs this test with, so the child can import the .ts adapter.
  const loader = process.execArgv.filter((arg) => arg.includes('@tapjs/typescript'));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...loader, '--input-type=module', '-e', program], {
      env: { ...process.env, COORD_TEST_URL: url, COORD_TEST_REACHABLE: reachable ? '1' : '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let closedAt: number | undefined;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (closedAt === undefined && /^closed$/m.test(output)) closedAt = performance.now();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, output, exitAfterClose: closedAt === undefined ? undefined : performance.now() - closedAt });
    });
  });
}

// ---- small helpers ----

function scriptSource(lua: string): ScriptSource {
  return { name: 'test/script', lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** The states named by the adapter's log lines ("<adapter> <url>: <state> (detail)"), in order. */
function statesIn(lines: readonly string[]): BackendState[] {
  return lines.flatMap((line) => {
    const m = /: (connecting|ready|reconnecting|closed)(?: \(.*\))?$/.exec(line);
    return m ? [m[1] as BackendState] : [];
  });
}

/** The port of the master that serves `slot`, from a CLUSTER SLOTS reply. */
function ownerPort(slots: Reply, slot: number): number {
  for (const range of slots as [number, number, [string, number, ...unknown[]], ...unknown[]][]) {
    if (slot >= range[0] && slot <= range[1]) return range[2][1];
  }
  throw new Error(`no master serves slot ${slot}`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
