// `coord plugins`: every plugin that can be run, with its roles.
import type { Plugin } from '../../core/plugin.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import type { Io } from '../io.ts';
import { list } from '../options.ts';

/** A built-in plugin as it is (its own tests check it); a module path or package loaded and checked. */
async function listed(spec: string): Promise<Plugin> {
  const builtin = Object.hasOwn(builtinPlugins, spec) ? builtinPlugins[spec] : undefined;
  if (builtin) return builtin();
  return (await import('../load-plugin.ts')).loadPlugin(spec);
}

export async function pluginsCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const specs = [...Object.keys(builtinPlugins), ...list(options.plugin)];
  if (!specs.length) {
    io.out('no plugins are built in; name one with --plugin ./path/to/plugin.js');
    return 0;
  }
  let code = 0;
  for (const spec of specs) {
    try {
      const p = await listed(spec);
      const roles = Object.keys(p.roles);
      const defaults = p.defaultRoles && p.defaultRoles.join() !== roles.join() ? ` (default: ${p.defaultRoles.join(', ')})` : '';
      io.out(`${p.name} ${p.version}  ${p.description}\n  roles: ${roles.join(', ')}${defaults}`);
    } catch (err) {
      io.out(`${spec}  cannot be loaded: ${(err as Error).message}`);
      code = 1;
    }
  }
  return code;
}
