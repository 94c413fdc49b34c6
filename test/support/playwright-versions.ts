// Other playwright-core versions for version-routing tests, installed from
// the npm registry into test/.probe/pw-<version> (gitignored, never into
// node_modules) the first time a test needs one; a clear error when npm
// cannot fetch it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root } from './cli.ts';

export type PlaywrightCore = typeof import('playwright-core');

/** playwright-core at `range` (e.g. '1.62'), installing it when missing; returns the module and its exact version. */
export function playwrightCore(range: string): { playwright: PlaywrightCore; version: string } {
  const dir = join(root, 'test/.probe', `pw-${range}`);
  const pkg = join(dir, 'node_modules/playwright-core/package.json');
  if (!existsSync(pkg)) {
    const r = spawnSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `playwright-core@${range}`], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    if (r.status !== 0 || !existsSync(pkg)) {
      const why = (r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' ');
      throw new Error(`cannot install playwright-core@${range} from the npm registry into ${dir} (needed to test version routing): ${why}`);
    }
  }
  const load = createRequire(join(dir, 'index.js'));
  return { playwright: load('playwright-core') as PlaywrightCore, version: (load('playwright-core/package.json') as { version: string }).version };
}
