// `coord config --dump`: the effective config (defaults < file < env < flags)
// as YAML, password masked. `coord config --check FILE`: is the file valid?
import { stringify } from 'yaml';
import { loadConfig, type CoordConfig } from '../../core/config.ts';
import { environment } from '../../core/platform.ts';
import type { Plugin } from '../../core/plugin.ts';
import { mask } from '../../core/url.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { loadPlugins } from '../load-plugin.ts';
import { configFlags, list, text } from '../options.ts';

export async function configCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const check = text(options.check);
  if (!options.dump && check === undefined) throw new UsageError('config needs --dump or --check FILE');
  // The sections shown and checked: the plugins named, else every built-in one.
  const plugins: Plugin[] = await loadPlugins(list(options.plugin).length ? list(options.plugin) : Object.keys(builtinPlugins));
  const knownPlugins = Object.keys(builtinPlugins);
  if (check !== undefined) {
    loadConfig({ plugins, knownPlugins, file: check });
    io.out(`${check}: valid`);
    return 0;
  }
  const config = loadConfig({ plugins, knownPlugins, file: text(options.config), env: environment(), flags: configFlags(options) });
  io.out(stringify(masked(config)).trimEnd());
  return 0;
}

function masked(config: Readonly<CoordConfig>): CoordConfig {
  const copy = structuredClone(config) as CoordConfig;
  if (copy.redis.url !== undefined) copy.redis.url = mask(copy.redis.url);
  return copy;
}
