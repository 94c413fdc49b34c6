// Builds the RoleContext a plugin's roles and scenarios run with, from a
// plugin, a backend and a key prefix: config from the plugin's schema
// defaults, key builders and scripts under the prefix, a silent logger and
// the system clock unless others are given.
import type { Backend } from '../core/backend.ts';
import { createAjv } from '../core/ajv.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { PluginError, type GlobalConfig, type Plugin, type RoleContext } from '../core/plugin.ts';
import { roleContext } from '../core/role-context.ts';
import { loadScriptDir } from '../core/scripts.ts';

/** What scenarioContext makes a context from: the plugin, a backend, a key prefix and a stop signal; config values, clock, logger and roles optionally. */
export interface ScenarioContextOptions {
  plugin: Plugin;
  backend: Backend;
  /** Key prefix of every key the context builds, e.g. '{conf-1a2b}:'. */
  keyPrefix: string;
  /** Aborted when the scenario (or process) is stopping. */
  signal: AbortSignal;
  /** Config values over the schema's defaults (validated like the defaults). */
  config?: Record<string, unknown>;
  clock?: Clock;
  logger?: Logger;
  /** Roles running in this process (default: all of the plugin's). */
  roles?: readonly string[];
}

/**
 * The RoleContext a plugin's roles and scenarios run with outside a process:
 * config from the plugin's schema defaults (with `config` over them), key
 * builders and scripts under `keyPrefix`, a silent logger and the system clock
 * unless others are given. For a plugin's own tests of a role or a script on a
 * backend of their choice.
 *
 * @example
 * const backend = await createBackend({});
 * const ctx = scenarioContext({ plugin, backend, keyPrefix: '{t1}:', signal: AbortSignal.timeout(10_000), config: { concurrency: 1 } });
 * await ctx.scripts.run('sweepLeases', { keys: { running: {}, runs: {} }, args: { nowS: 0, limit: 10, historyLength: 100 } });
 * t.same(await ctx.backend.send(['ZCARD', ctx.keys.running()]), 0);
 */
export function scenarioContext(opts: ScenarioContextOptions): RoleContext {
  const { plugin, backend, keyPrefix } = opts;
  // Parsed here rather than by registerPlugin: a scenario may run on a plugin
  // that is not runnable yet (no roles), as the suite's own fixtures are.
  const scripts = plugin.scripts ? loadScriptDir(plugin.scripts, plugin.contract) : [];
  const global: GlobalConfig = {
    redis: { adapter: backend.name, keyPrefix },
    log: { level: 'error', format: 'json' },
  };
  return roleContext({
    plugin,
    scripts,
    config: pluginConfig(plugin, opts.config),
    global: deepFreeze(global),
    backend,
    logger: opts.logger ?? silentLogger,
    clock: opts.clock ?? systemClock,
    signal: opts.signal,
    roles: opts.roles ?? Object.keys(plugin.roles),
  });
}

/**
 * The plugin's config section: the values given over its schema's defaults,
 * validated (the schema, then the plugin's own `check`) and frozen. Throws
 * PluginError naming what is wrong. For a test of code that takes the section
 * without starting a process.
 *
 * @example
 * const config = pluginConfig(plugin, { concurrency: 4 }) as CronConfig;
 * t.equal(config.concurrency, 4);
 * t.equal(config.pollInterval, 1); // the schema's default
 * t.throws(() => pluginConfig(plugin, { concurrency: 0 }), PluginError);
 */
export function pluginConfig(plugin: Plugin, values: Record<string, unknown> = {}): Readonly<Record<string, unknown>> {
  const ajv = createAjv({ useDefaults: true });
  let validate;
  try {
    validate = ajv.compile(plugin.config.schema);
  } catch (err) {
    throw new PluginError(`plugin ${plugin.name}: config schema is not a valid JSON Schema: ${(err as Error).message}`, { code: 'COORD_ERR_PLUGIN_CONFIG_SCHEMA' });
  }
  const config = structuredClone(values);
  if (!validate(config)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
    throw new PluginError(`plugin ${plugin.name}: config is not valid: ${problems.join('; ')}`, { code: 'COORD_ERR_PLUGIN_CONFIG' });
  }
  const extra = plugin.config.check?.(config) ?? [];
  if (extra.length) throw new PluginError(`plugin ${plugin.name}: config is not valid: ${extra.join('; ')}`, { code: 'COORD_ERR_PLUGIN_CONFIG' });
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
