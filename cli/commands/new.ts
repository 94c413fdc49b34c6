// `coord new plugin NAME [--dir FOLDER]`: copies templates/plugin into a new
// folder with the plugin's name filled in. What it makes passes its own tests
// as made (npm install && npm test) and runs with `coord run --plugin ./NAME`.
// Its dev dependency on coord is the coord that made it (a file: link to its
// package folder, installed or a checkout) unless --coord names another spec.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import semver from 'semver';
import { CONFIG_SECTIONS } from '../../core/config.ts';
import { findUp } from '../../core/paths.ts';
import { cwd } from '../../core/platform.ts';
import { PLUGIN_NAME } from '../../core/runtime.ts';
import { coordVersion } from '../../core/version.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { text } from '../options.ts';

/** Files npm would drop from a package are kept under another name in the template. */
const RENAMED: Record<string, string> = { gitignore: '.gitignore' };

export async function newCommand(what: string, name: string, options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  if (what !== 'plugin') throw new UsageError(`coord new makes plugins only: coord new plugin NAME (got "${what}")`, { code: 'COORD_ERR_CLI_NEW_WHAT' });
  if (!PLUGIN_NAME.test(name)) throw new UsageError(`plugin name "${name}" is not valid: expected lower case letters, digits and dashes, e.g. "job-queue"`, { code: 'COORD_ERR_CLI_NEW_NAME' });
  if (CONFIG_SECTIONS.includes(name)) throw new UsageError(`plugin name "${name}" is reserved (${CONFIG_SECTIONS.join(', ')} are config sections)`, { code: 'COORD_ERR_CLI_NEW_NAME' });
  if (Object.hasOwn(builtinPlugins, name)) throw new UsageError(`plugin name "${name}" is taken by a built-in plugin: choose another`, { code: 'COORD_ERR_CLI_NEW_NAME' });
  const target = resolve(cwd(), text(options.dir) ?? name);
  if (existsSync(target) && readdirSync(target).length > 0) throw new UsageError(`cannot make plugin ${name}: ${target} exists and is not empty`, { code: 'COORD_ERR_CLI_NEW_TARGET' });

  const values: Record<string, string> = {
    __NAME__: name,
    __ENV__: name.toUpperCase().replace(/-/g, '_'),
    __COORD_RANGE__: `^${semver.major(coordVersion)}.${semver.minor(coordVersion)}.0`,
    __COORD_SOURCE__: text(options.coord) ?? `file:${relative(target, dirname(findUp(import.meta.url, 'package.json'))) || '.'}`,
  };
  const template = findUp(import.meta.url, 'templates/plugin');
  const written: string[] = [];
  const copy = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      const dest = join(to, RENAMED[entry.name] ?? entry.name);
      if (entry.isDirectory()) copy(source, dest);
      else {
        writeFileSync(dest, readFileSync(source, 'utf8').replace(/__NAME__|__ENV__|__COORD_RANGE__|__COORD_SOURCE__/g, (m) => values[m]!));
        written.push(relative(target, dest));
      }
    }
  };
  copy(template, target);
  const near = relative(cwd(), target);
  const shown = !near ? '.' : near.startsWith('..') ? target : `./${near}`;
  io.out(
    [
      `made plugin ${name} in ${shown} (${written.length} files)`,
      '',
      `  cd ${shown} && npm install && npm test     # its own tests, as made`,
      `  npx coord run --plugin ${shown}          # run it`,
    ].join('\n'),
  );
  return 0;
}
