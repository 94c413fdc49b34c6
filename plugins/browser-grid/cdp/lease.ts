// The CDP lease: how a proxy on the same host as a worker connects a DevTools
// client straight to the browser the worker launched for it, so each message
// crosses one relay (the proxy) instead of two (the proxy, then the worker's
// CDP port). The proxy sends the client's upgrade request to the worker's CDP
// port with LEASE_REQUEST; the worker answers 200 with the browser's
// DevTools address in LEASE_ANSWER and keeps the connection open: it is the
// lease. Closing it retires the browser; the browser's exit closes it. A
// worker that does not know the header relays the client as before (101).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { dialUpgrade, type Dialed } from '../relay/dial.ts';

export const LEASE_REQUEST = 'X-Coord-Cdp-Lease';
export const LEASE_ANSWER = 'X-Coord-Cdp-Browser';

/** Does this upgrade request head ask for a lease? */
export function asksForLease(head: Buffer): boolean {
  return new RegExp(`\r\n${LEASE_REQUEST}:`, 'i').test(head.toString('latin1'));
}

/** The browser's ws:// DevTools address in a worker's 200 answer; undefined in any other answer. */
export function leasedBrowser(status: number, response: Buffer): string | undefined {
  if (status !== 200) return undefined;
  const value = new RegExp(`\r\n${LEASE_ANSWER}: *(ws://[^\r\n]+)\r\n`, 'i').exec(response.toString('latin1'))?.[1];
  return value?.trim();
}

/**
 * Is a worker endpoint on this host? Only then is its browser's DevTools port (bound to
 * 127.0.0.1 on the worker's host) reachable by the proxy.
 */
export function onThisHost(endpoint: string): boolean {
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Leases a browser from a worker's CDP port and replays the client's upgrade request on the
 * browser itself. The answer is the browser's, with the lease; a worker that relays instead
 * (101) or refuses gives its own answer, with no lease. The lease and the browser connection
 * close together, so every way the proxy ends the session also gives the browser back.
 */
export async function dialLeased(endpoint: string, req: Pick<IncomingMessage, 'rawHeaders'>, timeoutMs: number): Promise<Dialed & { lease?: Socket }> {
  const answer = await dialUpgrade(endpoint, req, timeoutMs, [`${LEASE_REQUEST}: 1`]);
  const browser = leasedBrowser(answer.status, answer.response);
  if (!browser) return answer;
  const lease = answer.socket;
  lease.on('error', () => lease.destroy());
  lease.resume(); // reading is how the worker's close is heard
  try {
    const dialed = await dialUpgrade(browser, req, timeoutMs);
    lease.once('close', () => dialed.socket.destroy());
    dialed.socket.once('close', () => lease.destroy());
    if (lease.destroyed) dialed.socket.destroy();
    return { ...dialed, lease };
  } catch (error) {
    lease.destroy();
    throw error;
  }
}
