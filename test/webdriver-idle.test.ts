// Dead clients give their slot back within the idle timeout (sessionTermination):
// a WebdriverIO 9 client (BiDi open) killed -9, or frozen with SIGSTOP (its
// socket stays open but answers no ping), and the client queued behind it is
// then served. A live BiDi client that sends nothing but answers pings keeps
// its session. Also the relay's frame reading itself: pongs to the node's
// pings are taken out, everything else passes unchanged however it is cut.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { remote } from 'webdriverio';
import { createBackend } from '../adapters/index.ts';
import { FrameCursor } from '../plugins/webdriver/relay/bidi.ts';
import { root } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { chromeOptions, newSessionBody, startPage, startWebdriver, w3c } from './support/webdriver.ts';
import { until } from './support/until.ts';

/** A client frame: masked, with the given opcode and payload. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const size = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : payload.length < 65536 ? Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 255]) : Buffer.concat([Buffer.from([0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(payload.length)); return b; })()]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x80 | opcode]), size, mask, masked]);
}

t.test('the frame cursor drops pongs and passes every other byte, however the stream is cut', async (t) => {
  const kept = [clientFrame(1, Buffer.from('{"id":1}')), clientFrame(1, randomBytes(300)), clientFrame(2, randomBytes(70_000)), clientFrame(8, Buffer.from([3, 232]))];
  const pong = () => clientFrame(0xa, Buffer.alloc(0));
  const stream = Buffer.concat([pong(), kept[0]!, pong(), kept[1]!, clientFrame(0xa, Buffer.from('x')), kept[2]!, pong(), kept[3]!]);
  for (const piece of [1, 2, 3, 7, 100, 4096, stream.length]) {
    const cursor = new FrameCursor((opcode) => opcode === 0xa);
    const out: Buffer[] = [];
    for (let at = 0; at < stream.length; at += piece) out.push(...cursor.feed(stream.subarray(at, at + piece)));
    t.same(Buffer.compare(Buffer.concat(out), Buffer.concat(kept)), 0, `cut every ${piece} bytes: the frames less the pongs`);
    t.ok(cursor.atBoundary, 'and it ends between frames');
  }
});

const IDLE = 4;
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const grid = await startWebdriver({ redis: 'embedded://idle', options: { proxy: { port }, api: { port: 0 }, orchestrator: { slots: 1 }, timeouts: { sessionTermination: IDLE, queue: 60 } } });
const backend = await createBackend({ url: 'embedded://idle' });
const page = await startPage();
const children: ChildProcess[] = [];
t.teardown(async () => {
  for (const c of children) c.kill('SIGKILL');
  await grid.handle.stop('test done');
  await backend.close();
  await page.close();
});
const codes = async (id: string) => ((await backend.send(['XRANGE', `session:${id}:log`, '-', '+'])) as [string, string[]][]).map(([, f]) => f[f.indexOf('code') + 1]!);

/** A WebdriverIO 9 client in its own process: a session with BiDi open, a page loaded, then nothing. */
async function clientProcess(): Promise<{ child: ChildProcess; id: string }> {
  const script = `
    import { remote } from 'webdriverio';
    const browser = await remote({ hostname: '127.0.0.1', port: ${port}, path: '/', logLevel: 'silent', capabilities: { browserName: 'chrome', 'goog:chromeOptions': ${JSON.stringify(chromeOptions)} } });
    await browser.url('${page.url}/client');
    await browser.browsingContextGetTree({});
    console.log(JSON.stringify({ id: browser.sessionId, bidi: String(browser.capabilities.webSocketUrl) }));
    setInterval(() => {}, 1 << 30);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const line = await until('the client process has its session', () => out.includes('\n') && out, 90_000).catch((e: Error) => {
    throw new Error(`${e.message}: ${err.slice(-500)}`);
  });
  const { id, bidi } = JSON.parse(line) as { id: string; bidi: string };
  t.match(bidi, `/session/${id}/se/bidi`, 'the client has BiDi through the grid');
  return { child, id };
}

/** Kills or stops the client holding the only slot; a queued client must then be served within the idle timeout. */
async function slotComesBack(t: Test, signal: NodeJS.Signals) {
  const { child, id } = await clientProcess();
  const queued = w3c(base, 'POST', '/session', newSessionBody());
  await until('a second session queued', async () => ((await backend.send(['SCARD', 'sessions.active'])) as number) === 2, 10_000);
  const stopped = Date.now();
  child.kill(signal);
  const served = await queued;
  t.equal(served.status, 200, 'the queued client got a session');
  // when the dead session ended, not when the next one was served: a browser's start-up on a loaded machine is no part of the promise
  const endedAt = Date.parse((await backend.send(['HGET', `session:${id}:status`, 'terminatedAt'])) as string);
  const took = (endedAt - stopped) / 1000;
  t.ok(took < IDLE + 3, `its session ended ${took.toFixed(1)} s after the ${signal} (idle timeout ${IDLE} s)`);
  t.equal((await codes(id)).find((c) => c === 'STIMEOUT'), 'STIMEOUT', 'the dead client\'s session ended idle (STIMEOUT)');
  child.kill('SIGKILL');
  t.equal((await w3c(base, 'DELETE', `/session/${served.body.value!.sessionId}`)).status, 200);
}

t.test('a client killed -9: its slot is free within the idle timeout and the queued client is served', (t) => slotComesBack(t, 'SIGKILL'));

t.test('a client frozen with SIGSTOP (BiDi socket open, no pong): its slot is reclaimed the same way', (t) => slotComesBack(t, 'SIGSTOP'));

t.test('a live BiDi client that sends nothing but answers pings keeps its session past the idle timeout', async (t) => {
  const browser = await remote({ hostname: '127.0.0.1', port, path: '/', logLevel: 'silent', capabilities: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions } });
  await browser.url(`${page.url}/quiet`);
  await new Promise((r) => setTimeout(r, (IDLE * 2 + 1) * 1000));
  t.equal(await browser.getTitle(), 'coord /quiet', `alive after ${IDLE * 2 + 1} s without a command`);
  await browser.deleteSession();
});
