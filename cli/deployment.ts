// A deployment file names its plugins: the sections under `plugins:` and the
// entries of `modules:` (plugins that are not built in: name → module path,
// relative to the file, or npm package). `coord run --config FILE` and
// `coord config` load those plugins before the config itself is loaded and
// validated (core/config.ts), so one file is enough to start a process.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { readConfigFile } from '../core/config.ts';
import { yaml } from '../core/lazy-module.ts';
import { cwd } from '../core/platform.ts';
import type { Plugin } from '../core/plugin.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { UsageError } from './errors.ts';
import { isPluginPath } from './plugin-spec.ts';

interface Named {
  /** The plugin's name: its section under plugins: or its key under modules:. */
  name: string;
  /** What to load: a built-in name, an absolute module path, or an npm package. */
  spec: string;
  /** The value under modules: as written (a path relative to the file), when there is one. */
  written?: string;
}

/**
 * The plugins a file names, in file order (plugins: first, then modules: not
 * among them). A file that cannot be read or parsed names none: loading the
 * config then reports why, with its line and column.
 */
export function namedPlugins(file: string): Named[] {
  let data: unknown;
  try {
    data = existsSync(file) ? yaml().parse(readFileSync(file, 'utf8')) : undefined;
  } catch {
    return [];
  }
  if (!isObject(data)) return [];
  const modules = isObject(data.modules) ? data.modules : {};
  const names = [...new Set([...Object.keys(isObject(data.plugins) ? data.plugins : {}), ...Object.keys(modules)])];
  return names.map((name) => {
    const module = modules[name];
    if (typeof module !== 'string' || !module) return { name, spec: name };
    // A path is the file's business (relative to it); a package is the project's (the working directory's).
    return { name, written: module, spec: isPluginPath(module) && !isAbsolute(module) && !module.startsWith('file:') ? resolve(dirname(file), module) : module };
  });
}

/** The names under `modules:` (sections of these plugins are not unknown keys, even in a process that does not run them). */
export function moduleNames(file: string | undefined): string[] {
  return file ? namedPlugins(file).filter((n) => n.spec !== n.name).map((n) => n.name) : [];
}

/** Loads the plugins a file names; a module whose plugin has another name is an error. */
export async function deploymentPlugins(file: string): Promise<Plugin[]> {
  readConfigFile(file); // a missing or unparsable file says so, with its line and column, before "no plugins" could
  const { loadPlugin } = await import('./load-plugin.ts'); // the loader and role runtime: not for commands that only read the file's names
  const plugins: Plugin[] = [];
  for (const { name, spec, written } of namedPlugins(file)) {
    let plugin: Plugin;
    try {
      plugin = await loadPlugin(spec);
    } catch (err) {
      // A modules: entry that does not load: the file and the key it came from, then why.
      if (written !== undefined && err instanceof UsageError) {
        const why = err.message.replace(/^cannot load plugin \S+: /, '');
        throw new UsageError(`config file ${file}: modules.${name} = ${written}${spec === written ? '' : ` (${spec})`}: ${why}`, { code: 'COORD_ERR_CLI_MODULE_ENTRY', cause: err });
      }
      if (spec !== name || !(err instanceof UsageError) || err.code !== 'COORD_ERR_CLI_UNKNOWN_PLUGIN') throw err;
      const builtin = Object.keys(builtinPlugins).join(', ') || 'none';
      throw new UsageError(
        `config file ${file}: plugin "${name}" is not built in (${builtin}) nor an npm package installed in ${cwd()}: say where it is under modules:, e.g. modules: { ${name}: ./plugins/${name}/index.js }`,
        { code: 'COORD_ERR_CLI_UNKNOWN_PLUGIN', cause: err },
      );
    }
    if (plugin.name !== name) {
      throw new UsageError(`config file ${file}: ${spec === name ? '' : `modules.${name} = ${spec} `}loads plugin "${plugin.name}", not "${name}": use its name under plugins: and modules:`, {
        code: 'COORD_ERR_CLI_PLUGIN_NAME_MISMATCH',
      });
    }
    plugins.push(plugin);
  }
  return plugins;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
