// CDP through the grid, as Selenium Grid serves it: a new Chromium session's
// capabilities carry `se:cdp` (ws://grid/session/{id}/se/cdp) and
// `se:cdpVersion`, and the grid relays that WebSocket to the session's
// Chromium — its browser-level DevTools endpoint, the one behind the
// `debuggerAddress` chromedriver reports — so selenium-webdriver's
// createCDPConnection() and Python's bidi_connection() work from another
// machine, through the proxy and its token, rather than dialling Chromium's
// own port. proxy → node → Chromium is the route BiDi takes; the node's end
// of it is here.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { relayBidi } from './bidi.ts';
import { hop } from '../http/hop.ts';
import type { Capabilities } from '../session/capabilities.ts';
import { WebDriverError } from '../errors.ts';

export const CDP_URL = 'se:cdp';
export const CDP_VERSION = 'se:cdpVersion';

/** The port of Chromium's DevTools endpoint, from chromedriver's answer ("localhost:PORT"); undefined for a browser without one. */
export function debuggerPort(actual: Capabilities): number | undefined {
  for (const vendor of ['goog:chromeOptions', 'ms:edgeOptions']) {
    const address = (actual[vendor] as { debuggerAddress?: unknown } | undefined)?.debuggerAddress;
    const port = typeof address === 'string' ? Number(/:(\d+)$/.exec(address)?.[1]) : NaN;
    if (port > 0 && port < 65536) return port;
  }
  return undefined;
}

/** The path of Chromium's browser-level WebSocket (/devtools/browser/<id>), from its /json/version. */
async function browserPath(port: number): Promise<string> {
  const answer = await hop({ host: '127.0.0.1', port }, 'GET', '/json/version', { host: `127.0.0.1:${port}` }, undefined, undefined, 5000);
  const url = (JSON.parse(answer.body.toString()) as { webSocketDebuggerUrl?: string }).webSocketDebuggerUrl;
  if (answer.status !== 200 || !url) throw new WebDriverError(`Chromium's DevTools endpoint on port ${port} named no browser WebSocket`, { code: 'COORD_ERR_WEBDRIVER_DEVTOOLS' });
  return new URL(url).pathname;
}

export interface CdpRelayOptions {
  /** Chromium's DevTools port. */
  port: number;
  pingMs: number;
  activity(): void;
}

/**
 * Relays one CDP WebSocket to Chromium's browser endpoint; resolves once
 * either side has closed. Like BiDi, what the client sends (messages, pongs)
 * is the session's activity.
 */
export async function relayCdp(req: IncomingMessage, client: Socket, head: Buffer, options: CdpRelayOptions): Promise<void> {
  const path = await browserPath(options.port);
  await relayBidi(req, client, head, { host: '127.0.0.1', port: options.port, path, pingMs: options.pingMs, activity: options.activity });
}

/** The capabilities a client is answered with: `se:cdp` set to `url` where the session has a CDP endpoint. */
export function withCdpUrl(caps: Capabilities, url: string): void {
  if (typeof caps[CDP_VERSION] === 'string') caps[CDP_URL] = url;
}
