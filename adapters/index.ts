// Picks an adapter for a URL: embedded when there is none, otherwise the one
// named (ioredis by default). Adapters are imported lazily so a process loads
// only the client library it uses.
import type { Backend, BackendOptions } from '../core/backend.ts';
import { parseRedisUrl, UrlError } from '../core/url.ts';

export const adapterNames = ['ioredis', 'node-redis', 'embedded'] as const;
export type AdapterName = (typeof adapterNames)[number];

export async function createBackend(options: BackendOptions & { adapter?: string }): Promise<Backend> {
  const parsed = parseRedisUrl(options.url);
  const adapter = options.adapter ?? (parsed.kind === 'embedded' ? 'embedded' : 'ioredis');
  if (!(adapterNames as readonly string[]).includes(adapter)) {
    throw new UrlError(`unknown adapter "${adapter}": expected one of ${adapterNames.join(', ')}`);
  }
  if (adapter === 'embedded' && parsed.kind !== 'embedded') {
    throw new UrlError(`adapter embedded runs in-process and takes no Redis URL (got ${parsed.display})`);
  }
  if (adapter !== 'embedded' && parsed.kind === 'embedded') {
    throw new UrlError(`adapter ${adapter} needs a Redis URL such as redis://127.0.0.1:6379`);
  }
  switch (adapter as AdapterName) {
    case 'ioredis':
      return (await import('./ioredis.ts')).createIoredisBackend(options);
    case 'node-redis':
      return (await import('./node-redis.ts')).createNodeRedisBackend(options);
    case 'embedded':
      return (await import('./embedded.ts')).createEmbeddedBackend(options);
  }
}
