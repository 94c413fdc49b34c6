// A churn of upgrade-then-close connections, from a process of its own: raw
// TCP, each a valid WebSocket upgrade request with a Playwright User-Agent,
// then end. Its own process, so a real client measured meanwhile in the
// caller's process is slowed only by what the churn does to the grid, not by
// the caller's event loop opening 2,000 sockets.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/** A User-Agent of the grid's own Playwright version, so a raw client is admitted as a real one would be. */
export const playwrightUserAgent = `Playwright/${(createRequire(import.meta.url)('playwright-core/package.json') as { version: string }).version} (raw test client)`;

const script = `
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
const [port, count, userAgent] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3]];
const request = () => ['GET /?browser=chromium HTTP/1.1', 'Host: 127.0.0.1:' + port, 'User-Agent: ' + userAgent, 'Upgrade: websocket', 'Connection: Upgrade',
  'Sec-WebSocket-Key: ' + randomBytes(16).toString('base64'), 'Sec-WebSocket-Version: 13', '', ''].join('\\r\\n');
await Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
  const socket = connect({ host: '127.0.0.1', port }, () => socket.end(request()));
  socket.on('error', () => {});
  socket.on('close', resolve);
  socket.resume();
})));
`;

/** Opens `count` upgrade-then-close connections to the proxy on `port` at once; resolves once every one is closed. */
export function churn(port: number, count: number): Promise<void> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(port), String(count), playwrightUserAgent], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the churn process exited with ${code}`))));
  });
}
