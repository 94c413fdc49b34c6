// What the command line needs of the config without loading the config's
// validator (ajv) and YAML parser: a --set flag parsed, and the schema at a
// path (for the help of a plugin's flags). config.ts re-exports them.
import type { JsonSchema } from './contract.ts';
import { ConfigError } from './errors.ts';

/** A value given on the command line. `path` is dotted: 'redis.url', 'roles', 'browser-grid.maxConcurrentSessions'. */
export interface ConfigFlag {
  path: string;
  /** Text is coerced by the schema's type, like environment values. */
  value: unknown;
  /** The flag as typed, for messages ('--redis'); default `--set <path>`. */
  flag?: string;
}

/**
 * Parses `path=value` as given to `--set` into a ConfigFlag for loadConfig; the
 * value stays text, coerced by the schema's type when the config is loaded.
 * Throws ConfigError when there is no `=`.
 *
 * @example
 * const flags = ['log.level=debug', 'cron.concurrency=4'].map(parseSetFlag);
 * // [{ path: 'log.level', value: 'debug', flag: '--set log.level' }, …]
 * const config = loadConfig({ plugins: [plugin], flags });
 */
export function parseSetFlag(text: string): ConfigFlag {
  const at = text.indexOf('=');
  if (at <= 0) throw new ConfigError([`config: --set "${text}": expected path=value, e.g. --set log.level=debug`], { code: 'COORD_ERR_CONFIG_SET' });
  return { path: text.slice(0, at), value: text.slice(at + 1), flag: `--set ${text.slice(0, at)}` };
}

/** The sub-schema at a path, following `properties` and `items`. */
export function schemaAt(schema: JsonSchema, path: readonly string[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = schema;
  for (const name of path) {
    if (!node) return undefined;
    if (node.type === 'array' && /^\d+$/.test(name)) node = node.items as JsonSchema | undefined;
    else node = (node.properties as Record<string, JsonSchema> | undefined)?.[name];
  }
  return node;
}
