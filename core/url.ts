// Parsing of backend URLs, shared by every adapter so they accept the same forms:
//   (none) | embedded://[name]            in-process backend
//   redis://[user:password@]host[:port][/db]
//   rediss://…                             the same over TLS
//   redis://host:port,host:port,…          Redis Cluster seeds (also rediss://)
//   redis+cluster://host:port[,…]          Redis Cluster from a single seed
//   redis+sentinel://[user:password@]host:port[,host:port…]/MASTER_NAME[/db]
//                                          the master Sentinel names (port default 26379);
//                                          the credentials are the data nodes', not the sentinels'
//   rediss+sentinel://…                    the same over TLS (data nodes and sentinels)
import { UrlError } from './errors.ts';

/** One server of a Redis URL: a host (an IPv6 address without brackets) and a port. */
export interface HostPort {
  host: string;
  port: number;
}

/** What every URL of a Redis server (not embedded://) says. */
interface ServerFields {
  tls: boolean;
  username?: string;
  password?: string;
  db: number;
  /** The servers, or for kind 'sentinel' the sentinels. */
  hosts: HostPort[];
  display: string;
}

/**
 * A Redis URL, parsed: `embedded` (in-process, by name), `single`, `cluster`
 * (seeds) or `sentinel` (the sentinels and the master's name), with TLS,
 * credentials, database and `display`, the URL with its password masked.
 */
export type ParsedUrl =
  | { kind: 'embedded'; name: string; display: string }
  | ({ kind: 'single' | 'cluster' } & ServerFields)
  | ({ kind: 'sentinel'; masterName: string } & ServerFields);

/** A URL that cannot be used; the message says what and what was expected. */
export { UrlError } from './errors.ts';

const EXPECTED =
  'expected redis://[user:password@]host[:port][/db], rediss://…, redis://host:port,host:port (cluster), redis+sentinel://host:port[,host:port…]/MASTER_NAME or embedded://';
const SENTINEL_EXPECTED = 'expected redis+sentinel://[user:password@]host:port[,host:port…]/MASTER_NAME[/db] (or rediss+sentinel://)';
const SENTINEL_PORT = 26379;

/**
 * Parses any URL coord accepts (none or embedded://, redis://, rediss://, a
 * cluster seed list, redis+cluster://, redis+sentinel://) into a ParsedUrl.
 * Throws UrlError naming the URL (password masked) and what was expected. An
 * adapter uses it so that every adapter accepts the same forms.
 *
 * @example
 * const parsed = parseRedisUrl('redis://app:secret@10.0.0.5:6380/2');
 * // { kind: 'single', tls: false, username: 'app', password: 'secret', db: 2, hosts: [{ host: '10.0.0.5', port: 6380 }], display: 'redis://app:***@10.0.0.5:6380/2' }
 * parseRedisUrl(undefined).kind; // 'embedded'
 */
export function parseRedisUrl(url: string | undefined): ParsedUrl {
  if (url === undefined || url === '' || url === 'embedded' || url.startsWith('embedded://')) {
    const name = url?.startsWith('embedded://') ? url.slice('embedded://'.length) || 'default' : 'default';
    return { kind: 'embedded', name, display: `embedded://${name}` };
  }
  if (/^rediss?\+sentinel:/i.test(url)) return parseSentinelUrl(url);
  const match = /^(redis|rediss|redis\+cluster|rediss\+cluster):\/\/(?:([^@/]*)@)?([^/?#]+)(?:\/(\d*))?\/?$/.exec(url);
  if (!match) throw new UrlError(`bad Redis URL "${mask(url)}": ${EXPECTED}`);
  const [, scheme, auth, hostList, dbText] = match as unknown as [string, string, string | undefined, string, string | undefined];
  const hosts = hostList.split(',').map((part) => parseHostPort(part, url));
  const { username, password } = credentials(auth);
  const cluster = scheme.endsWith('+cluster') || hosts.length > 1;
  const db = dbText ? Number(dbText) : 0;
  if (cluster && db !== 0) throw new UrlError(`bad Redis URL "${mask(url)}": Redis Cluster has only database 0`, { code: 'COORD_ERR_REDIS_URL_CLUSTER_DB' });
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

/** redis+sentinel://[user:password@]s1:p1,s2:p2/MASTER_NAME[/db]: the hosts are the sentinels, the credentials the data nodes'. */
function parseSentinelUrl(url: string): ParsedUrl {
  const match = /^(redis|rediss)\+sentinel:\/\/(?:([^@/]*)@)?([^/?#]+)\/([^/?#]+)(?:\/(\d+))?\/?$/i.exec(url);
  if (!match) throw new UrlError(`bad Redis URL "${mask(url)}": ${SENTINEL_EXPECTED}`);
  const [, scheme, auth, hostList, masterName, dbText] = match as unknown as [string, string, string | undefined, string, string, string | undefined];
  return {
    kind: 'sentinel',
    masterName: decodeURIComponent(masterName),
    tls: scheme.toLowerCase() === 'rediss',
    ...credentials(auth),
    db: dbText ? Number(dbText) : 0,
    hosts: hostList.split(',').map((part) => parseHostPort(part, url, SENTINEL_PORT)),
    display: mask(url),
  };
}

/** user:password, :password or password (the user part of a URL), decoded. */
function credentials(auth: string | undefined): { username?: string; password?: string } {
  if (auth === undefined) return {};
  const colon = auth.indexOf(':');
  const user = colon === -1 ? '' : auth.slice(0, colon);
  const pass = colon === -1 ? auth : auth.slice(colon + 1);
  return { username: user ? decodeURIComponent(user) : undefined, password: pass ? decodeURIComponent(pass) : undefined };
}

function parseHostPort(part: string, url: string, defaultPort = 6379): HostPort {
  const m = /^(\[[0-9a-fA-F:]+\]|[^:[\]]+)(?::(\d+))?$/.exec(part);
  if (!m) throw new UrlError(`bad Redis URL "${mask(url)}": "${part}" is not host[:port]`, { code: 'COORD_ERR_REDIS_URL_HOST' });
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (!(port > 0 && port < 65536)) throw new UrlError(`bad Redis URL "${mask(url)}": port ${m[2]} is not 1-65535`, { code: 'COORD_ERR_REDIS_URL_HOST' });
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/**
 * The URL with its password replaced by ***, safe to print or log (a URL with
 * no credentials is returned as it is).
 *
 * @example
 * mask('redis://app:secret@10.0.0.5:6379'); // 'redis://app:***@10.0.0.5:6379'
 * mask('rediss://secret@cache.example:6380'); // 'rediss://***@cache.example:6380'
 * logger.info('connecting', { url: mask(config.redis.url ?? 'embedded://') });
 */
export function mask(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)([^@/]*)@/i, (_all, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return colon === -1 ? `${scheme}***@` : `${scheme}${auth.slice(0, colon)}:***@`;
  });
}
