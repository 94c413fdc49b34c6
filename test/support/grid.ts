// Helpers for browser-grid tests: start grid roles in this process, a page
// to open, and a Playwright client that connects through the proxy.
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { connectBackend } from '../../adapters/index.ts';
import { loadConfig } from '../../core/config.ts';
import { memoryLogger } from '../../core/logger.ts';
import { startProcess, type ProcessHandle } from '../../core/runtime.ts';
import plugin from '../../plugins/browser-grid/index.ts';
import { freePort } from './redis.ts';

export interface GridProcess {
  handle: ProcessHandle;
  logs: ReturnType<typeof memoryLogger>['lines'];
}

/** Starts browser-grid roles as one coord process would (`coord run --plugin browser-grid --role …`). */
export async function startGrid(opts: { redis?: string; prefix?: string; roles?: string[]; options?: Record<string, unknown> }): Promise<GridProcess> {
  const config = loadConfig({
    plugins: [plugin],
    env: {},
    flags: [
      ...(opts.redis ? [{ path: 'redis.url', value: opts.redis }] : []),
      ...(opts.prefix ? [{ path: 'redis.keyPrefix', value: opts.prefix }] : []),
      { path: 'roles', value: opts.roles ?? [] },
      ...Object.entries(opts.options ?? {}).map(([k, v]) => ({ path: `browser-grid.${k}`, value: v })),
    ],
  });
  const logger = memoryLogger();
  const handle = await startProcess({ plugins: [plugin], config, logger, backend: connectBackend });
  return { handle, logs: logger.lines };
}

/** A page whose title the tests read, on a free loopback port. */
export async function startPageServer(): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const port = await freePort();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>coord ${req.url}</title><h1>hello</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

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
