// Assembles the RoleContext a role is made with, from parts the caller
// already has (the runtime from its container, a test from its fakes).
import type { Backend } from './backend.ts';
import type { Clock } from './clock.ts';
import { channelBuilders, keyBuilders, type KeySpec } from './contract.ts';
import { pluginKeyPrefix } from './key-prefix.ts';
import type { Logger } from './logger.ts';
import type { GlobalConfig, Plugin, Role, RoleContext } from './plugin.ts';
import { scriptRunner, type ScriptDefinition } from './scripts.ts';

/**
 * `C` and `K` type the context made (its config and keys), as a role of a
 * `Plugin<C, K>` gets it: a plugin that makes a context of its own (a worker
 * thread of its users, say) gets its typed context without a cast.
 */
export interface RoleContextParts<C = Record<string, unknown>, K extends Record<string, KeySpec> = Record<string, KeySpec>> {
  /** The plugin, or only what a context is made from: its name and contract (a thread need not load the rest). */
  plugin: Pick<Plugin<C, K>, 'name' | 'contract'>;
  /** The plugin's parsed scripts (registerPlugin parses them once; loadScriptDir parses a folder), or a function that parses them when one is first run. */
  scripts: readonly ScriptDefinition[] | (() => readonly ScriptDefinition[]);
  /** The plugin's config section, validated and frozen. */
  config: Readonly<C>;
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
export function roleContext<C = Record<string, unknown>, K extends Record<string, KeySpec> = Record<string, KeySpec>>(parts: RoleContextParts<C, K>): RoleContext<C, K> {
  const { plugin, backend } = parts;
  const section = parts.config as Readonly<Record<string, unknown>>;
  const { prefix: keyPrefix } = pluginKeyPrefix({ redis: parts.global.redis, plugins: { [plugin.name]: section } }, plugin.name);
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
