// Picks an adapter for a URL: embedded when there is none, otherwise the one
// named (ioredis by default). Adapters are imported lazily so a process loads
// only the client library it uses. connectBackend is what the CLI (and
// 'coordkit/embed') hand startProcess: core itself knows no adapter.
import type { Backend, BackendOptions } from '../core/backend.ts';
import type { GlobalConfig } from '../core/plugin.ts';
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';
import { parseRedisUrl, UrlError } from '../core/url.ts';

/**
 * The built-in adapters, by the name `redis.adapter`, `--adapter` and
 * createBackend take.
 *
 * @example
 * const name = optionText(options.adapter) ?? 'ioredis';
 * if (!(adapterNames as readonly string[]).includes(name)) throw new UsageError(`unknown adapter "${name}": expected one of ${adapterNames.join(', ')}`);
 */
export const adapterNames = ['ioredis', 'node-redis', 'embedded'] as const;
/** The name of a built-in adapter: 'ioredis', 'node-redis' or 'embedded'. */
export type AdapterName = (typeof adapterNames)[number];

/**
 * A backend: embedded (in-process, no Redis) without a URL, else the adapter
 * named (ioredis by default). Throws UrlError for a URL it cannot use.
 *
 * @example
 * const embedded = await createBackend({});
 * const redis = await createBackend({ url: 'redis://127.0.0.1:6379', adapter: 'node-redis' });
 */
export async function createBackend(options: BackendOptions & { adapter?: string }): Promise<Backend> {
  const parsed = parseRedisUrl(options.url);
  const adapter = options.adapter ?? (parsed.kind === 'embedded' ? 'embedded' : 'ioredis');
  if (!(adapterNames as readonly string[]).includes(adapter)) {
    throw new UrlError(`unknown adapter "${adapter}": expected one of ${adapterNames.join(', ')}`, { code: 'COORD_ERR_ADAPTER_UNKNOWN' });
  }
  if (adapter === 'embedded' && parsed.kind !== 'embedded') {
    throw new UrlError(`adapter embedded runs in-process and takes no Redis URL (got ${parsed.display})`, { code: 'COORD_ERR_ADAPTER_URL' });
  }
  if (adapter !== 'embedded' && parsed.kind === 'embedded') {
    throw new UrlError(`adapter ${adapter} needs a Redis URL such as redis://127.0.0.1:6379`, { code: 'COORD_ERR_ADAPTER_URL' });
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

/** What of config.redis a backend is made from. */
export type RedisConfig = Pick<GlobalConfig['redis'], 'url' | 'adapter' | 'tls' | 'sentinelUsername' | 'sentinelPassword'>;

/** createBackend's options from config.redis: the URL, the adapter, TLS files and the sentinels' own credentials. */
export function backendOptions(redis: Readonly<RedisConfig>): BackendOptions & { adapter?: string } {
  const sentinel = redis.sentinelUsername === undefined && redis.sentinelPassword === undefined ? undefined : { username: redis.sentinelUsername, password: redis.sentinelPassword };
  return { url: redis.url, adapter: redis.adapter, ...(redis.tls ? { tls: redis.tls } : {}), ...(sentinel ? { sentinel } : {}) };
}

/**
 * The backend config.redis names (embedded without a URL), once it answers:
 * a Redis that cannot be reached rejects with ConnectionError "cannot reach
 * Redis at …: why". Pass it to startProcess as `backend` (an OpenBackend).
 *
 * @example
 * const backend = await connectBackend(config.redis);
 */
export async function connectBackend(redis: Readonly<RedisConfig>, logger: Logger = silentLogger): Promise<Backend> {
  const backendLogger = logger.child({ backend: redis.adapter ?? 'auto' });
  const backend = await createBackend({ ...backendOptions(redis), clientName: 'coord', log: (line) => backendLogger.debug(line) });
  try {
    await backend.ready();
  } catch (err) {
    await backend.close().catch(() => {});
    throw err;
  }
  return backend;
}
