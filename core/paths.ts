// Finding files that ship beside the code (lua/, templates) from a module's
// URL. The same module runs from the sources (Deno, tests) and from dist/
// (Node), so the folder is found by walking up rather than by a fixed '../..'.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModuleLoadError } from './errors.ts';

/**
 * The nearest ancestor of `moduleUrl`'s folder that holds `relative`, joined
 * with it; throws when none does. For files that ship beside a plugin's code
 * (its lua/ folder, templates): the same module runs from the sources and from
 * a build folder, so a fixed `../..` would be wrong in one of them.
 *
 * @example
 * const luaDir = findUp(import.meta.url, 'lua'); // e.g. /app/node_modules/coord-cron/lua
 * const scripts = loadScriptDir(luaDir, contract);
 */
export function findUp(moduleUrl: string | URL, relative: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) {
      // A file that ships beside the code is missing: an incomplete install or copy.
      throw new ModuleLoadError(`cannot load ${relative} for ${fileURLToPath(moduleUrl)}: not in any folder above it`, { code: 'COORD_ERR_SHIPPED_FILE_MISSING' });
    }
    dir = parent;
  }
}
