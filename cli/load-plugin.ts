// Finds a plugin by what the user typed after --plugin: a built-in name
// ('browser-grid'), a module path ('./my-plugin.js', './my-plugin.ts', or a
// plugin folder), or an npm package installed in the project coord runs in
// ('coord-plugin-cron', resolved from the working directory, not from coord's
// own folder). The module's default export is the plugin; either way it is
// checked (registerPlugin) before use. A .ts plugin loads on Node and Deno
// alike (core/typescript-modules.ts).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve as resolveModule } from 'import-meta-resolve';
import { didYouMean } from '../core/did-you-mean.ts';
import { cwd, moduleUrl } from '../core/platform.ts';
import type { Plugin } from '../core/plugin.ts';
import { registerPlugin } from '../core/runtime.ts';
import { importModule, ModuleLoadError } from '../core/typescript-modules.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { UsageError } from './errors.ts';
import { checkRunFlags } from './options.ts';
import { isPluginPath } from './plugin-spec.ts';

/** Loads and checks a plugin. `base` is the folder relative paths and package names are resolved from (default: the working directory). */
export async function loadPlugin(spec: string, base = cwd()): Promise<Plugin> {
  const plugin = isPluginPath(spec) ? await importPlugin(spec, moduleUrl(spec, base)) : await byName(spec, base);
  registerPlugin(plugin);
  checkRunFlags(plugin);
  return plugin;
}

export async function loadPlugins(specs: readonly string[], base = cwd()): Promise<Plugin[]> {
  const plugins: Plugin[] = [];
  for (const spec of specs) plugins.push(await loadPlugin(spec, base));
  return plugins;
}

/** A built-in plugin, else an npm package of that name installed where coord runs. */
async function byName(name: string, base: string): Promise<Plugin> {
  const load = Object.hasOwn(builtinPlugins, name) ? builtinPlugins[name] : undefined;
  if (load) return load();
  const url = packageUrl(name, base);
  if (url) return importPlugin(name, url);
  const names = Object.keys(builtinPlugins);
  const close = didYouMean(name, names);
  const known = names.length ? `built in: ${names.join(', ')}` : 'no plugins are built in';
  throw new UsageError(
    `unknown plugin "${name}"${close ? `: did you mean "${close}"?` : ''} (${known}; no npm package of that name is installed in ${base}; or give a module path such as ./my-plugin.js)`,
    { code: 'COORD_ERR_CLI_UNKNOWN_PLUGIN' },
  );
}

/** The entry of an installed npm package, resolved as `import` would from a module in `base`; undefined when it is not installed. */
function packageUrl(name: string, base: string): string | undefined {
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w./-]+)?$/i.test(name)) return undefined;
  try {
    return resolveModule(name, pathToFileURL(join(base, 'noop.js')).href);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw new UsageError(`cannot load plugin ${name}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`, { code: 'COORD_ERR_CLI_PLUGIN_LOAD', cause: err });
  }
}

/**
 * A plugin folder's entry: its package.json `exports` (as the package would
 * import itself) or `main`, else index.ts, index.mts, index.js or index.mjs.
 */
function folderEntry(spec: string, dir: string): string {
  const manifest = join(dir, 'package.json');
  if (existsSync(manifest)) {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; exports?: unknown; main?: string };
    if (pkg.name && pkg.exports !== undefined) return resolveModule(pkg.name, pathToFileURL(manifest).href);
    if (pkg.main) return pathToFileURL(join(dir, pkg.main)).href;
  }
  for (const file of ['index.ts', 'index.mts', 'index.js', 'index.mjs']) if (existsSync(join(dir, file))) return pathToFileURL(join(dir, file)).href;
  throw new UsageError(`cannot load plugin ${spec}: the folder has no index.ts, index.js or package.json with exports or main`, { code: 'COORD_ERR_CLI_PLUGIN_FOLDER' });
}

async function importPlugin(spec: string, url: string): Promise<Plugin> {
  const path = fileURLToPath(url);
  if (existsSync(path) && statSync(path).isDirectory()) url = folderEntry(spec, path);
  let module: Record<string, unknown>;
  try {
    module = await importModule(url, `plugin ${spec}`);
  } catch (err) {
    throw err instanceof ModuleLoadError ? new UsageError(err.message, { code: 'COORD_ERR_CLI_PLUGIN_LOAD', cause: err }) : err;
  }
  if (module.default === undefined) throw new UsageError(`cannot load plugin ${spec}: the module has no default export (export default plugin)`, { code: 'COORD_ERR_CLI_PLUGIN_EXPORT' });
  return module.default as Plugin;
}
