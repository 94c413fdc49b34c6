// The relay's keepalive: frame boundaries are found from headers alone, a
// silent client is disconnected and its session given back, a live idle one stays.
import { connect as tcpConnect } from 'node:net';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { FrameBoundaries } from '../plugins/browser-grid/relay/keepalive.ts';
import { connect, startGrid, startPageServer, titleOf } from './support/grid.ts';
import { freePort, startRedis } from './support/redis.ts';

const frame = (len: number, masked = false): Buffer => {
  const head = len < 126 ? [0x82, len] : len < 65536 ? [0x82, 126, len >> 8, len & 0xff] : [0x82, 127, 0, 0, 0, 0, (len >>> 24) & 0xff, (len >> 16) & 0xff, (len >> 8) & 0xff, len & 0xff];
  if (masked) head[1]! |= 0x80;
  return Buffer.concat([Buffer.from(head), Buffer.alloc(masked ? 4 : 0), Buffer.alloc(len, 7)]);
};

t.test('frame boundaries from headers, across any chunking', async (t) => {
  const stream = Buffer.concat([frame(0), frame(5), frame(300), frame(70_000), frame(3, true)]);
  for (const size of [1, 2, 3, 7, 100, stream.length]) {
    const b = new FrameBoundaries();
    let ends = 0;
    for (let at = 0; at < stream.length; at += size) {
      b.feed(stream.subarray(at, at + size));
      if (b.atBoundary) ends++;
    }
    t.ok(b.atBoundary, `chunks of ${size}: ends at a boundary`);
    t.ok(ends >= 1);
  }
  const partial = new FrameBoundaries();
  partial.feed(frame(300).subarray(0, 10));
  t.notOk(partial.atBoundary, 'not inside a frame');
  const header = new FrameBoundaries();
  header.feed(Buffer.from([0x82]));
  t.notOk(header.atBoundary, 'not inside a header');
});

t.test('a silent client is disconnected and its session given back; a live idle one stays', async (t) => {
  const redis = await startRedis();
  const page = await startPageServer();
  const port = await freePort();
  const grid = await startGrid({ redis: redis.url, prefix: '{ka}:', roles: ['worker', 'proxy'], options: { port, workers: 1, keepaliveInterval: 1 } });
  const backend = await createBackend({ url: redis.url });
  t.teardown(async () => {
    const stopping = Date.now();
    await grid.handle.stop('done');
    console.error('stop took', Date.now() - stopping, JSON.stringify(grid.logs.slice(-8).map((l) => l.msg)));
    await backend.close();
    await page.close();
    await redis.stop();
  });
  const active = async () => Object.values((await backend.send(['HVALS', '{ka}:cluster:active_connections'])) as string[]).reduce((n, v) => n + Number(v), 0);

  const live = await connect(port);
  // a client that completes the upgrade, then never answers anything (as if its machine lost power)
  const silent = tcpConnect({ host: '127.0.0.1', port });
  await new Promise((r) => silent.once('connect', r));
  silent.write(['GET /?browser=chromium HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'));
  const answer = await new Promise<string>((r) => silent.once('data', (d: Buffer) => r(d.toString('latin1'))));
  t.match(answer, /^HTTP\/1\.1 101/, 'the silent client was relayed');
  silent.on('data', () => {}); // reads what comes, answers nothing
  t.equal(await active(), 2);
  const closedAt = new Promise<number>((r) => silent.once('close', () => r(Date.now())));
  const started = Date.now();
  const ended = (await closedAt) - started;
  t.ok(ended < 6000, `the silent client was disconnected after ${ended} ms (interval 1 s)`);
  const deadline = Date.now() + 3000;
  while ((await active()) !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.equal(await active(), 1, 'its session no longer counts');
  t.match(await titleOf(live, page.url), /coord/, 'the live client, idle all that time, still works');
  await live.close();
});
