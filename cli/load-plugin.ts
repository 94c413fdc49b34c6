// Finds a plugin by what the user typed after --plugin: a built-in name
// ('browser-grid') or a module path ('./my-plugin.js'), whose default export
// is the plugin. Either way it is checked (registerPlugin) before use.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { didYouMean } from '../core/did-you-mean.ts';
import { moduleUrl } from '../core/platform.ts';
import type { Plugin } from '../core/plugin.ts';
import { registerPlugin } from '../core/runtime.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { UsageError } from './errors.ts';

export function isPluginPath(spec: string): boolean {
  return /^(\.{1,2}[\\/]|[\\/]|file:)/.test(spec) || /\.(m?js|ts)$/.test(spec);
}

export async function loadPlugin(spec: string): Promise<Plugin> {
  const plugin = isPluginPath(spec) ? await importPlugin(spec) : await builtin(spec);
  registerPlugin(plugin);
  return plugin;
}

export async function loadPlugins(specs: readonly string[]): Promise<Plugin[]> {
  const plugins: Plugin[] = [];
  for (const spec of specs) plugins.push(await loadPlugin(spec));
  return plugins;
}

async function builtin(name: string): Promise<Plugin> {
  const load = Object.hasOwn(builtinPlugins, name) ? builtinPlugins[name] : undefined;
  if (!load) {
    const names = Object.keys(builtinPlugins);
    const close = didYouMean(name, names);
    const known = names.length ? `built in: ${names.join(', ')}` : 'no plugins are built in';
    throw new UsageError(`unknown plugin "${name}"${close ? `: did you mean "${close}"?` : ''} (${known}; or give a module path such as ./my-plugin.js)`);
  }
  return load();
}

async function importPlugin(path: string): Promise<Plugin> {
  const url = moduleUrl(path);
  if (!existsSync(fileURLToPath(url))) throw new UsageError(`cannot load plugin ${path}: no such file`);
  let module: { default?: unknown };
  try {
    module = (await import(url)) as { default?: unknown };
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw new UsageError(`cannot load plugin ${path}: Node runs .ts only with a TypeScript loader; build it to .js, or run coord on Deno`);
    }
    throw new UsageError(`cannot load plugin ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (module.default === undefined) throw new UsageError(`cannot load plugin ${path}: the module has no default export (export default plugin)`);
  return module.default as Plugin;
}
