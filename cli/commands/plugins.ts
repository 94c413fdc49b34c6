// `coord plugins`: every plugin that can be run, with its roles.
import { builtinPlugins } from '../../plugins/index.ts';
import type { Io } from '../io.ts';
import { loadPlugin } from '../load-plugin.ts';
import { list } from '../options.ts';

export async function pluginsCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const specs = [...Object.keys(builtinPlugins), ...list(options.plugin)];
  if (!specs.length) {
    io.out('no plugins are built in; name one with --plugin ./path/to/plugin.js');
    return 0;
  }
  let code = 0;
  for (const spec of specs) {
    try {
      const p = await loadPlugin(spec);
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
