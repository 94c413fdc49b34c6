// Where a plugin's keys live: the key prefix of its own config section
// (`<plugin>.keyPrefix`) or else the process's `redis.keyPrefix`; and the
// Redis Cluster rule for it. On a cluster every key a script or MULTI touches
// must hash to one slot, which only a hash tag in the prefix guarantees.
import type { CoordConfig } from './config.ts';

/** The config path a plugin's prefix came from, for messages. */
export interface PluginPrefix {
  readonly plugin: string;
  readonly prefix: string;
  /** 'redis.keyPrefix' or '<plugin>.keyPrefix'. */
  readonly path: string;
}

/** The key prefix of `plugin`'s keys: its section's keyPrefix when set, else redis.keyPrefix. */
export function pluginKeyPrefix(config: Pick<CoordConfig, 'redis' | 'plugins'>, plugin: string): PluginPrefix {
  const own = config.plugins[plugin]?.keyPrefix;
  if (typeof own === 'string') return { plugin, prefix: own, path: `${plugin}.keyPrefix` };
  return { plugin, prefix: config.redis.keyPrefix, path: 'redis.keyPrefix' };
}

/**
 * The hash tag Redis Cluster reads in a key starting with `prefix`: the text
 * between the first `{` and the first `}` after it, when that text is not
 * empty (cluster-key-slot's rule); undefined when the prefix has none.
 */
export function hashTag(prefix: string): string | undefined {
  const open = prefix.indexOf('{');
  if (open === -1) return undefined;
  const close = prefix.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return undefined;
  return prefix.slice(open + 1, close);
}

/** One line per plugin whose prefix has no hash tag, naming the fix; empty when every prefix can serve a cluster. */
export function clusterPrefixProblems(prefixes: readonly PluginPrefix[]): string[] {
  return prefixes
    .filter((p) => hashTag(p.prefix) === undefined)
    .map((p) => {
      const base = p.prefix.replace(/[{}]/g, '').replace(/:+$/, '') || p.plugin;
      const flag = p.path === 'redis.keyPrefix' ? `--prefix '{${base}}:'` : `--set ${p.path}='{${base}}:'`;
      return (
        `config: ${p.path} ${JSON.stringify(p.prefix)} has no hash tag, but Redis is a cluster: ` +
        `plugin ${p.plugin}'s keys would spread over slots and its scripts fail with CROSSSLOT; ` +
        `put a tag in the prefix, e.g. ${flag}`
      );
    });
}
