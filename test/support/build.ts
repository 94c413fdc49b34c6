// Tests that run the built CLI (dist/) build it first when any source is newer
// than the build. `npm test` builds before tap starts (tsc, the config validators, the bundle), so
// this only does work when a test file is run alone after an edit.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cli.ts';

const SOURCES = ['core', 'cli', 'adapters', 'plugins', 'conformance', 'entries'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Runs `npm run compile`'s steps (tsc, the config validators, the bundle) unless dist/bundle/coord.js is newer than every source. */
export function buildIfStale(): void {
  const main = join(root, 'dist/bundle/coord.js');
  const built = existsSync(main) ? statSync(main).mtimeMs : 0;
  const newest = Math.max(...SOURCES.map((d) => newestSource(join(root, d))), statSync(join(root, 'tsconfig.json')).mtimeMs);
  if (built > newest) return;
  const tsc = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: root, encoding: 'utf8' });
  if (tsc.status !== 0) throw new Error(`the build (tsc -p tsconfig.json) failed:\n${(tsc.stdout + tsc.stderr).slice(0, 4000)}`);
  const validators = spawnSync(process.execPath, ['dist/scripts/compile-validators.js'], { cwd: root, encoding: 'utf8' });
  if (validators.status !== 0) throw new Error(`the build's config validators failed:\n${(validators.stdout + validators.stderr).slice(0, 4000)}`);
  const bundle = spawnSync(process.execPath, ['dist/scripts/bundle.js'], { cwd: root, encoding: 'utf8' });
  if (bundle.status !== 0) throw new Error(`the build's bundle failed:\n${(bundle.stdout + bundle.stderr).slice(0, 4000)}`);
  chmodSync(main, 0o755); // as npm run build leaves it: the bin npx links to
}
