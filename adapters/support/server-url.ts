// The URL a Redis client adapter accepts: a server or cluster, never embedded://.
import type { BackendOptions } from '../../core/backend.ts';
import { parseRedisUrl, UrlError, type ParsedUrl } from '../../core/url.ts';

export type ServerUrl = Exclude<ParsedUrl, { kind: 'embedded' }>;

export function parseServerUrl(adapter: string, options: BackendOptions): ServerUrl {
  const parsed = parseRedisUrl(options.url);
  if (parsed.kind === 'embedded') {
    throw new UrlError(`adapter ${adapter} needs a Redis URL such as redis://127.0.0.1:6379 (got ${options.url ? parsed.display : 'none'})`, { code: 'COORD_ERR_ADAPTER_URL' });
  }
  return parsed;
}

/** "ioredis redis://…" — how the adapter's log lines start. */
export function logLabel(adapter: string, parsed: ServerUrl): string {
  return `${adapter} ${parsed.display}`;
}
