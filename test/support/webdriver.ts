// Helpers for webdriver tests: start grid roles in this process (as one
// `coord run --plugin webdriver [--role …]` would), a page whose title the
// clients read, and raw W3C requests and WebSocket upgrades.
import { connect } from 'node:net';
import { createBackend } from '../../adapters/index.ts';
import type { Backend } from '../../core/backend.ts';
import plugin from '../../plugins/webdriver/index.ts';
import { chromiumArgs, chromiumBinary } from './chromium.ts';
import { startPage, type PageServer } from './page.ts';
import { startRoles, type RolesOptions, type RolesProcess } from './roles.ts';

export { startPage };

export type WebdriverProcess = RolesProcess;

/** Starts webdriver roles; nested options name deeper --set paths: { proxy: { port: 1 } } → webdriver.proxy.port. */
export function startWebdriver(opts: RolesOptions): Promise<WebdriverProcess> {
  return startRoles(plugin, opts);
}

/**
 * Every role in this process on the embedded backend (`redis`, default the
 * unnamed dataset), a client on the same dataset, and the page; the grid,
 * the client and the page are closed at teardown, in that order.
 */
export async function startEmbeddedGrid(
  t: { teardown(fn: () => unknown): void },
  opts: { redis?: string; options: Record<string, unknown> },
): Promise<{ grid: WebdriverProcess; backend: Backend; page: PageServer }> {
  const grid = await startWebdriver(opts);
  const backend = await createBackend({ url: opts.redis ?? 'embedded://' });
  const page = await startPage();
  t.teardown(async () => {
    await grid.handle.stop('test done');
    await backend.close();
    await page.close();
  });
  return { grid, backend, page };
}

/** The capabilities every test client asks for: headless Chromium. */
export const chromeOptions = {
  binary: chromiumBinary,
  args: ['--headless=new', ...chromiumArgs],
};

export interface W3CAnswer {
  status: number;
  body: { value?: { sessionId?: string; capabilities?: Record<string, unknown>; error?: string; message?: string; stacktrace?: string; ready?: boolean } & Record<string, unknown> };
}

/** One W3C request; the answer's JSON body. */
export async function w3c(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<W3CAnswer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as W3CAnswer['body']) : {} };
}

/** A New Session body for headless Chromium. */
export function newSessionBody(extra: Record<string, unknown> = {}): unknown {
  return { capabilities: { alwaysMatch: { browserName: 'chrome', 'goog:chromeOptions': chromeOptions, ...extra }, firstMatch: [{}] } };
}

/** A WebSocket upgrade by hand to 127.0.0.1:`port`: the status the server answers and the body after its head (a 101 is closed at once). */
export function wsUpgrade(port: number, target: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString();
      if (/^HTTP\/1\.1 101/.test(text) && text.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text: text.slice(text.indexOf('\r\n\r\n') + 4) }));
    socket.on('error', reject);
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`);
  });
}

/** The grid's id of a session whose creator was handed ID.SECRET (Basic auth on a grid with a token; see auth.ts). */
export function gridId(handed: string): string {
  return handed.split('.')[0]!;
}
