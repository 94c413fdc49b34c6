// Parsing of backend URLs, shared by every adapter so they accept the same forms:
//   (none) | embedded://[name]            in-process backend
//   redis://[user:password@]host[:port][/db]
//   rediss://…                             the same over TLS
//   redis://host:port,host:port,…          Redis Cluster seeds (also rediss://)
//   redis+cluster://host:port[,…]          Redis Cluster from a single seed
import { UrlError } from './errors.ts';

export interface HostPort {
  host: string;
  port: number;
}

export type ParsedUrl =
  | { kind: 'embedded'; name: string; display: string }
  | {
      kind: 'single' | 'cluster';
      tls: boolean;
      username?: string;
      password?: string;
      db: number;
      hosts: HostPort[];
      display: string;
    };

/** A URL that cannot be used; the message says what and what was expected. */
export { UrlError } from './errors.ts';

const EXPECTED =
  'expected redis://[user:password@]host[:port][/db], rediss://…, redis://host:port,host:port (cluster) or embedded://';

export function parseRedisUrl(url: string | undefined): ParsedUrl {
  if (url === undefined || url === '' || url === 'embedded' || url.startsWith('embedded://')) {
    const name = url?.startsWith('embedded://') ? url.slice('embedded://'.length) || 'default' : 'default';
    return { kind: 'embedded', name, display: `embedded://${name}` };
  }
  const match = /^(redis|rediss|redis\+cluster|rediss\+cluster):\/\/(?:([^@/]*)@)?([^/?#]+)(?:\/(\d*))?\/?$/.exec(url);
  if (!match) throw new UrlError(`bad Redis URL "${mask(url)}": ${EXPECTED}`);
  const [, scheme, auth, hostList, dbText] = match as unknown as [string, string, string | undefined, string, string | undefined];
  const hosts = hostList.split(',').map((part) => parseHostPort(part, url));
  let username: string | undefined;
  let password: string | undefined;
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    const user = colon === -1 ? '' : auth.slice(0, colon);
    const pass = colon === -1 ? auth : auth.slice(colon + 1);
    username = user ? decodeURIComponent(user) : undefined;
    password = pass ? decodeURIComponent(pass) : undefined;
  }
  const cluster = scheme.endsWith('+cluster') || hosts.length > 1;
  const db = dbText ? Number(dbText) : 0;
  if (cluster && db !== 0) throw new UrlError(`bad Redis URL "${mask(url)}": Redis Cluster has only database 0`);
  return {
    kind: cluster ? 'cluster' : 'single',
    tls: scheme.startsWith('rediss'),
    username,
    password,
    db,
    hosts,
    display: mask(url),
  };
}

function parseHostPort(part: string, url: string): HostPort {
  const m = /^(\[[0-9a-fA-F:]+\]|[^:[\]]+)(?::(\d+))?$/.exec(part);
  if (!m) throw new UrlError(`bad Redis URL "${mask(url)}": "${part}" is not host[:port]`);
  const port = m[2] === undefined ? 6379 : Number(m[2]);
  if (!(port > 0 && port < 65536)) throw new UrlError(`bad Redis URL "${mask(url)}": port ${m[2]} is not 1-65535`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** The URL with its password replaced by ***, safe to print. */
export function mask(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)([^@/]*)@/i, (_all, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return colon === -1 ? `${scheme}***@` : `${scheme}${auth.slice(0, colon)}:***@`;
  });
}
