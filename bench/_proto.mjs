import net from 'node:net';
import { Client } from 'undici';
import { HTTPParser } from 'http-parser-js';
import { startTarget } from './load-runs.mjs';
const { url, measure, stop } = await startTarget();
const u = new URL(url);
const N = 50, S = 4;
function undiciRun(sec) {
  return new Promise((resolve) => {
    const end = performance.now() + sec * 1000; let live = N;
    for (let i = 0; i < N; i++) {
      const c = new Client(url, { pipelining: 1, keepAliveTimeout: 10000 });
      const opts = { path: '/', method: 'GET', blocking: false };
      const h = { onConnect() {}, onHeaders() { return true; }, onData() { return true; }, onComplete() { next(); }, onError(e) { console.error(e); } };
      const next = () => { if (performance.now() < end) c.dispatch(opts, h); else { c.close(); if (--live === 0) resolve(); } };
      next();
    }
  });
}
function parserRun(sec) {
  return new Promise((resolve) => {
    const end = performance.now() + sec * 1000; let live = N;
    const req = Buffer.from(`GET / HTTP/1.1\r\nhost: ${u.host}\r\nconnection: keep-alive\r\n\r\n`, 'latin1');
    for (let i = 0; i < N; i++) {
      const s = net.connect(+u.port, u.hostname); s.setNoDelay(true);
      const p = new HTTPParser(HTTPParser.RESPONSE);
      p[HTTPParser.kOnHeadersComplete] = () => {};
      p[HTTPParser.kOnBody] = () => {};
      p[HTTPParser.kOnMessageComplete] = () => { next(); };
      s.on('data', (d) => p.execute(d));
      const next = () => { if (performance.now() < end) s.write(req); else { s.end(); if (--live === 0) resolve(); } };
      s.once('connect', next);
    }
  });
}
function handRun(sec) {
  return new Promise((resolve) => {
    const end = performance.now() + sec * 1000; let live = N;
    const req = Buffer.from(`GET / HTTP/1.1\r\nhost: ${u.host}\r\nconnection: keep-alive\r\n\r\n`, 'latin1');
    for (let i = 0; i < N; i++) {
      const s = net.connect(+u.port, u.hostname); s.setNoDelay(true);
      s.on('data', (d) => { const h = d.indexOf('\r\n\r\n'); const status = (d[9]-48)*100+(d[10]-48)*10+(d[11]-48); const cl = d.indexOf('content-length:'); next(status); });
      const next = () => { if (performance.now() < end) s.write(req); else { s.end(); if (--live === 0) resolve(); } };
      s.once('connect', next);
    }
  });
}
const kinds = { undici: undiciRun, parser: parserRun, hand: handRun };
for (const k in kinds) await measure(() => kinds[k](1));
const res = { undici: [], parser: [], hand: [] };
for (let r = 0; r < 4; r++) for (const k of (r % 2 ? Object.keys(kinds).reverse() : Object.keys(kinds))) res[k].push(await measure(() => kinds[k](S)));
for (const k in res) console.log(k, res[k].map((x) => `${Math.round(x.rps)}/s ${x.cpuUs.toFixed(1)}µs`).join('  '));
stop();
