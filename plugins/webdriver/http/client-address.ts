// Which client a request comes from. Behind a load balancer or reverse proxy
// every connection comes from the proxy's address, and one address stands for
// many clients; the proxy names the client in X-Forwarded-For (each proxy on
// the way appends the address it got the request from). Only proxies the
// operator lists (proxy.trustedProxies) are believed: the client is the last
// address in X-Forwarded-For that is not one of them.
import { BlockList, isIP } from 'node:net';

export interface TrustedProxies {
  /** Is this peer a proxy whose X-Forwarded-For is believed? */
  has(address: string): boolean;
}

/** Addresses (192.0.2.7, ::1) or subnets (10.0.0.0/8, fd00::/8); none: nobody's X-Forwarded-For is believed. */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return {
    has: (address) => {
      if (!entries.length) return false;
      const plain = unmapped(address);
      const type = isIP(plain);
      return type !== 0 && list.check(plain, type === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/** The client: the peer itself, or — when the peer is a trusted proxy — the last untrusted address it forwarded. */
export function realClient(peer: string, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  if (!forwardedFor || !trusted.has(peer)) return peer;
  const hops = [forwardedFor].flat().join(',').split(',').map((hop) => hop.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted.has(hops[i]!)) return hops[i]!;
  return hops[0] ?? peer;
}

/** 192.0.2.7 for ::ffff:192.0.2.7 (an IPv4 client on a dual-stack socket). */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
