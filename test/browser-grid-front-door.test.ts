// The proxy's front door under abuse, with a real Playwright client served
// throughout: slowloris heads are answered 408 within the documented 10 s,
// 2,000 upgrade-then-close connections neither push the client out nor
// leave memory behind, and malformed requests get their status codes. The
// proxy and the worker run in their own processes, with real Chromium.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect as tcpConnect, type Socket } from 'node:net';
import t from 'tap';
import { chromium } from 'playwright-core';
import { CHECK_EVERY_MS, HEAD_TIMEOUT_MS } from '../plugins/browser-grid/proxy/client-limits.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';
import { until } from './support/until.ts';

const rig = await startPageRig(t, 'browser-grid');
const { page } = rig;
const prefix = '{door}:';
const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'shutdownCommandTtl=5', 'drainTimeout=5', 'maxConcurrentSessions=5'];
const port = await freePort();
const worker = rig.run('worker', { prefix, sets: [...sets, 'workers=2'] });
const proxy = rig.run('proxy', { prefix, sets: [...sets, `port=${port}`] });
await ready(worker, proxy);
/** A User-Agent of the grid's own Playwright version, so a raw client is admitted as a real one would be. */
const userAgent = `Playwright/${(createRequire(import.meta.url)('playwright-core/package.json') as { version: string }).version} (raw test client)`;
/** Load on this shared machine may delay a close by a few seconds past the documented bound. */
const SLACK_MS = 4000;
/** Connections per burst, and the least a leaking connection would keep (a socket with its buffers keeps more). */
const BURST = 2000;
const LEAK_BYTES = 8 * 1024;

/** The proxy process's resident memory, in bytes. */
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proxy.child.pid}/status`, 'utf8'))![1]) * 1024;

/** A real client connecting, opening a page and leaving, over and over until stopped; every failure is kept. */
function loopingClient() {
  const failures: string[] = [];
  let rounds = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      try {
        const browser = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 60_000 });
        const p = await browser.newPage();
        await p.goto(`${page.url}/loop${rounds}`);
        if ((await p.title()) !== `coord /loop${rounds}`) failures.push(`round ${rounds}: wrong title`);
        await browser.close();
      } catch (error) {
        failures.push(`round ${rounds}: ${(error as Error).message.split('\n')[0]}`);
      }
      rounds++;
    }
  })();
  return {
    failures,
    rounds: () => rounds,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** Opens a connection and writes `data`; resolves with what came back and whether the connection was reset. */
function exchange(data: string | Buffer): Promise<{ answer: string; reset: boolean }> {
  return new Promise((resolve) => {
    let answer = '';
    let reset = false;
    const socket = tcpConnect({ host: '127.0.0.1', port }, () => socket.write(data));
    socket.on('data', (c) => (answer += c.toString('latin1')));
    socket.on('error', () => (reset = true));
    socket.on('close', () => resolve({ answer, reset }));
  });
}

t.test(`300 slowloris connections are answered 408 within ${HEAD_TIMEOUT_MS / 1000} s while a real client is served`, async (t) => {
  const client = loopingClient();
  const start = Date.now();
  const closes = await Promise.all(
    Array.from({ length: 300 }, () => new Promise<{ ms: number; answer: string }>((resolve) => {
      let answer = '';
      let timer: ReturnType<typeof setInterval> | undefined;
      const socket: Socket = tcpConnect({ host: '127.0.0.1', port }, () => {
        socket.write(`GET /?browser=chromium HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
        // one more header line every 5 s, never the blank line that ends the head
        timer = setInterval(() => socket.write(`X-Slow-${Date.now()}: 1\r\n`), 5000);
      });
      socket.on('data', (c) => (answer += c.toString()));
      socket.on('error', () => {});
      socket.on('close', () => (clearInterval(timer), resolve({ ms: Date.now() - start, answer })));
    })),
  );
  await client.stop();
  const slowest = Math.max(...closes.map((c) => c.ms));
  t.equal(closes.filter((c) => c.answer.startsWith('HTTP/1.1 408')).length, 300, 'every one answered 408');
  t.ok(slowest <= HEAD_TIMEOUT_MS + CHECK_EVERY_MS + SLACK_MS, `all closed by ${slowest} ms (documented: ${HEAD_TIMEOUT_MS} ms, checked every ${CHECK_EVERY_MS} ms)`);
  t.ok(Math.min(...closes.map((c) => c.ms)) >= HEAD_TIMEOUT_MS - 500, 'none before its time');
  t.same(client.failures, [], `the real client was served in all ${client.rounds()} rounds`);
  t.ok(client.rounds() >= 2, 'and it ran throughout');
});

t.test('2,000 upgrade-then-close connections, twice: the real client is never refused, and the second burst leaves no more memory behind', async (t) => {
  // warm up the proxy's paths first
  const warm = loopingClient();
  await until('a few warm-up rounds', () => warm.rounds() >= 3, 120_000);
  await warm.stop();
  t.same(warm.failures, []);
  const request = () => [`GET /?browser=chromium HTTP/1.1`, `Host: 127.0.0.1:${port}`, `User-Agent: ${userAgent}`, 'Upgrade: websocket', 'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', '', ''].join('\r\n');
  /** One burst while a real client loops; resolves with the proxy's RSS 10 s after it. */
  const burst = async (round: number) => {
    const client = loopingClient();
    await Promise.all(
      Array.from({ length: BURST }, () => new Promise<void>((resolve) => {
        const socket = tcpConnect({ host: '127.0.0.1', port }, () => socket.end(request()));
        socket.on('error', () => {});
        socket.on('close', () => resolve());
        socket.resume();
      })),
    );
    const burstOver = Date.now();
    await until('the real client served after the burst', () => client.rounds() >= 2, 60_000);
    await client.stop();
    t.same(client.failures, [], `burst ${round}: the real client was never refused (${client.rounds()} rounds)`);
    await new Promise((r) => setTimeout(r, Math.max(0, 10_000 - (Date.now() - burstOver))));
    return rss();
  };
  // The first burst grows the heap to what such a burst needs (how far depends on when the
  // collector runs, so on the machine's load); a leak then grows it again by what each
  // connection keeps, a proxy that frees them reuses the same memory.
  const first = await burst(1);
  const second = await burst(2);
  t.ok(second - first <= BURST * LEAK_BYTES, `RSS after the first burst ${(first / 2 ** 20).toFixed(1)} MB, after the second ${(second / 2 ** 20).toFixed(1)} MB (a leak of ${LEAK_BYTES / 1024} KB per connection would add ${((BURST * LEAK_BYTES) / 2 ** 20).toFixed(0)} MB)`);
  const status = JSON.parse(await (await fetch(`http://127.0.0.1:${port}/status`)).text());
  t.equal(status.types.chromium.active, 0, 'no churned connection still counts');
  t.equal(status.types.chromium.queued, 0, 'nor waits in the queue');
});

t.test('malformed requests get a status, not a reset or silence', async (t) => {
  const head = (extra: string) => `GET /?browser=chromium HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${extra}\r\n`;
  const big = await exchange(head(`Sec-WebSocket-Version: 13\r\nX-Big: ${'a'.repeat(1024 * 1024)}\r\n`));
  t.match(big.answer, /^HTTP\/1\.1 431 /, 'a 1 MB header: 431');
  t.notOk(big.reset, 'not a reset');
  t.match((await exchange(head(`X-Big: ${'a'.repeat(64 * 1024)}\r\n`))).answer, /^HTTP\/1\.1 431 /, 'a 64 KB header: 431');
  const v8 = await exchange(head('Sec-WebSocket-Version: 8\r\n'));
  t.match(v8.answer, /^HTTP\/1\.1 426 /, 'Sec-WebSocket-Version 8 with no key: 426');
  t.match(v8.answer, /\r\nSec-WebSocket-Version: 13\r\n/i, 'naming the version served (RFC 6455 §4.2.2)');
  t.match((await exchange(head('Sec-WebSocket-Version: 13\r\n'))).answer, /^HTTP\/1\.1 400 /, 'version 13 with no key: 400');
});

t.test('an upgraded client that never speaks is disconnected and its slot given back', async (t) => {
  const key = randomBytes(16).toString('base64');
  const started = Date.now();
  const { answer } = await exchange([`GET /?browser=chromium HTTP/1.1`, `Host: 127.0.0.1:${port}`, `User-Agent: ${userAgent}`, 'Upgrade: websocket', 'Connection: Upgrade',
    `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13', 'x-playwright-browser: chromium', '', ''].join('\r\n'));
  t.match(answer, /^HTTP\/1\.1 101 /, 'it was relayed');
  const ms = Date.now() - started;
  t.ok(ms >= HEAD_TIMEOUT_MS - 500 && ms <= HEAD_TIMEOUT_MS + SLACK_MS, `and disconnected after ${ms} ms of silence`);
  await until('its slot given back', async () => JSON.parse(await (await fetch(`http://127.0.0.1:${port}/status`)).text()).types.chromium.active === 0, 10_000);
});

t.test('the grid stops cleanly', async (t) => {
  for (const p of [worker, proxy]) p.kill('SIGTERM');
  t.same(await Promise.all([worker, proxy].map((p) => p.exited)), [0, 0]);
});
