// Helpers for webdriver tests: start grid roles in this process (as one
// `coord run --plugin webdriver [--role …]` would), a page whose title the
// clients read, and raw W3C requests.
import { createServer, type Server } from 'node:http';
import { connectBackend } from '../../adapters/index.ts';
import { loadConfig } from '../../core/config.ts';
import { memoryLogger } from '../../core/logger.ts';
import { startProcess, type ProcessHandle } from '../../core/runtime.ts';
import plugin from '../../plugins/webdriver/index.ts';
import { freePort } from './redis.ts';

export interface WebdriverProcess {
  handle: ProcessHandle;
  logs: ReturnType<typeof memoryLogger>['lines'];
}

/** Flattens nested options into --set paths: { proxy: { port: 1 } } → webdriver.proxy.port. */
function flags(options: Record<string, unknown>, at = 'webdriver'): { path: string; value: unknown }[] {
  return Object.entries(options).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? flags(v as Record<string, unknown>, `${at}.${k}`) : [{ path: `${at}.${k}`, value: v }],
  );
}

export async function startWebdriver(opts: { redis?: string; prefix?: string; roles?: string[]; options?: Record<string, unknown> }): Promise<WebdriverProcess> {
  const config = loadConfig({
    plugins: [plugin],
    env: {},
    flags: [
      ...(opts.redis ? [{ path: 'redis.url', value: opts.redis }] : []),
      ...(opts.prefix ? [{ path: 'redis.keyPrefix', value: opts.prefix }] : []),
      { path: 'roles', value: opts.roles ?? [] },
      ...flags(opts.options ?? {}),
    ],
  });
  const logger = memoryLogger();
  const handle = await startProcess({ plugins: [plugin], config, logger, backend: connectBackend });
  return { handle, logs: logger.lines };
}

/** A page whose title is "coord <path>", on a free loopback port. */
export async function startPage(): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const port = await freePort();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>coord ${req.url}</title><h1>hello</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The capabilities every test client asks for: headless Chromium. */
export const chromeOptions = {
  binary: '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
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
