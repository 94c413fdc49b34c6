// Assembles the RoleContext a role is made with, from parts the caller
// already has (the runtime from its container, a test from its fakes).
import type { Backend } from './backend.ts';
import type { Clock } from './clock.ts';
import { channelBuilders, keyBuilders } from './contract.ts';
import { pluginKeyPrefix } from './key-prefix.ts';
import type { Logger } from './logger.ts';
import type { GlobalConfig, Plugin, Role, RoleContext } from './plugin.ts';
import { scriptRunner, type ScriptDefinition } from './scripts.ts';

export interface RoleContextParts {
  plugin: Plugin;
  /** The plugin's parsed scripts (registerPlugin parses them once). */
  scripts: readonly ScriptDefinition[];
  /** The plugin's config section, validated and frozen. */
  config: Readonly<Record<string, unknown>>;
  global: Readonly<GlobalConfig>;
  backend: Backend;
  logger: Logger;
  clock: Clock;
  signal: AbortSignal;
  roles: readonly string[];
  /** The plugin's roles made in this process so far, by name (default: none). */
  peer?: (role: string) => Role | undefined;
}

/**
 * The RoleContext a role is made with, from parts the caller already has: key
 * and channel builders and a script runner under the plugin's key prefix,
 * frozen. The runtime makes every role's context this way; a plugin calls it
 * for a context of its own outside the runtime (a worker thread, a tool).
 *
 * @example
 * const ctx = roleContext({
 *   plugin: { name: 'cron', contract },
 *   scripts: loadScriptDir(findUp(import.meta.url, 'lua'), contract),
 *   config: data.config,
 *   global: data.global,
 *   backend,
 *   logger: silentLogger,
 *   clock: systemClock,
 *   signal: stopping.signal,
 *   roles: ['runner'],
 * });
 * const lost = await ctx.scripts.run('sweepLeases', { keys: { running: {}, runs: {} }, args: { nowS: Math.floor(ctx.clock.now() / 1000), limit: 100, historyLength: 1000 } });
 */
export function roleContext(parts: RoleContextParts): RoleContext {
  const { plugin, backend } = parts;
  const { prefix: keyPrefix } = pluginKeyPrefix({ redis: parts.global.redis, plugins: { [plugin.name]: parts.config } }, plugin.name);
  // The plugin's own prefix is the one its code reads as ctx.global.redis.keyPrefix.
  const global = keyPrefix === parts.global.redis.keyPrefix ? parts.global : Object.freeze({ ...parts.global, redis: Object.freeze({ ...parts.global.redis, keyPrefix }) });
  return Object.freeze({
    config: parts.config,
    global,
    backend,
    keys: keyBuilders(plugin.contract, keyPrefix),
    channels: channelBuilders(plugin.contract, keyPrefix),
    scripts: scriptRunner(backend, plugin.contract, parts.scripts, keyPrefix),
    logger: parts.logger,
    clock: parts.clock,
    signal: parts.signal,
    roles: Object.freeze([...parts.roles]),
    peer: <R extends Role>(role: string) => parts.peer?.(role) as R | undefined,
  });
}
