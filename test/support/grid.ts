// Helpers for browser-grid tests: start grid roles in this process, a page
// to open, and Playwright clients that connect through the proxy.
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { chromium, type Browser, type BrowserType } from 'playwright-core';
import plugin from '../../plugins/browser-grid/index.ts';
import { startPage } from './page.ts';
import { startRoles, type RolesOptions, type RolesProcess } from './roles.ts';

export type GridProcess = RolesProcess;

/** Starts browser-grid roles as one coord process would (`coord run --plugin browser-grid --role …`). */
export function startGrid(opts: RolesOptions): Promise<GridProcess> {
  return startRoles(plugin, opts);
}

/** A page whose title the tests read, on a free loopback port. */
export const startPageServer = startPage;

export function connect(proxyPort: number, query = '?browser=chromium', timeout = 60_000): Promise<Browser> {
  return chromium.connect(`ws://127.0.0.1:${proxyPort}/${query}`, { timeout });
}

/** Opens a page through a connected browser and returns its title. */
export async function titleOf(browser: Browser, url: string): Promise<string> {
  const page = await browser.newPage();
  await page.goto(url);
  const title = await page.title();
  await page.close();
  return title;
}

/** Clients in batches of 8 through the proxy, the nth connecting with `clients[n % clients.length]` and opening `<pageUrl>/<tag><n>`; a line for each one that failed. */
export async function clientsInBatches(port: number, clients: BrowserType[], batches: number, pageUrl: string, tag: string): Promise<string[]> {
  const failures: string[] = [];
  for (let batch = 0; batch < batches; batch++) {
    await Promise.all(
      Array.from({ length: 8 }, async (_v, i) => {
        const n = batch * 8 + i;
        try {
          const b = await clients[n % clients.length]!.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 60_000 });
          const p = await b.newPage();
          await p.goto(`${pageUrl}/${tag}${n}`);
          if ((await p.title()) !== `coord /${tag}${n}`) failures.push(`client ${n}: wrong title`);
          await b.close();
        } catch (error) {
          failures.push(`client ${n}: ${(error as Error).message.split('\n')[0]}`);
        }
      }),
    );
  }
  return failures;
}

/**
 * A raw WebSocket upgrade with a given User-Agent (to the proxy's `/?browser=chromium` unless
 * `path` says otherwise, with `headers` lines added); resolves to the whole answer (head and
 * body) once the server closes the connection.
 */
export function rawUpgrade(port: number, userAgent: string, { path = '/?browser=chromium', headers = [] as string[] } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port }, () => {
      socket.write([`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `User-Agent: ${userAgent}`, 'Upgrade: websocket', 'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', ...headers, '', ''].join('\r\n'));
    });
    let text = '';
    socket.on('data', (c) => (text += c.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
  });
}
