// The host proxies dial to reach this machine's browser servers. A worker bound
// to a wildcard address (0.0.0.0, ::) with no advertiseHost would register
// ws://0.0.0.0:PORT, which a proxy on another host dials as itself; as Selenium
// Grid's nodes do, it advertises its own address instead: the first
// non-loopback IPv4 address, else the host's name.
import { hostname, networkInterfaces } from 'node:os';

/** Is `host` an address that means "every interface" (not one a client can dial)? */
export function isWildcard(host: string): boolean {
  return ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0'].includes(host);
}

/** advertiseHost when set; the machine's own address when workerHost is a wildcard; else undefined (workerHost is dialled as it is). */
export function advertisedHost(workerHost: string, advertiseHost: string | undefined): { host: string | undefined; detected: boolean } {
  if (advertiseHost || !isWildcard(workerHost)) return { host: advertiseHost, detected: false };
  const own = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  return { host: own?.address ?? hostname(), detected: true };
}
