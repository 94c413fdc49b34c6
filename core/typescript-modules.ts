// Imports a module the user names (a plugin, a worker, a scenario): .js/.mjs
// as they are; .ts natively on Deno and under a Node TypeScript loader (tap),
// and on plain Node 20 through typescript-hooks.ts (sucrase, a dependency: no
// TypeScript install needed), registered the first time a .ts import fails.
// On Node, the module's imports of coord's package get the running coord
// (package-hooks.ts, registered before the first such import). Which runtime
// needs which hook is platform.ts's business (registerModuleHook).
// Whatever goes wrong is one ModuleLoadError line: which module, and why.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findUp } from './paths.ts';
import { moduleUrl, registerModuleHook } from './platform.ts';
import { type CoordErrorCode, ModuleLoadError } from './errors.ts';

export { ModuleLoadError } from './errors.ts';

const TS = /\.m?ts$/;
let hooksRegistered: Promise<boolean> | undefined;
let packageHooksRegistered: Promise<void> | undefined;

/**
 * Imports `module`: a file path (absolute, or relative to the working
 * directory), a file: URL, or the name of a package coord can import. `label`
 * is how an error names it, e.g. `plugin ./my-plugin.ts` (default: `module`).
 * Throws ModuleLoadError. A `.ts` file loads on Node 20 too (coord strips its
 * types as it loads), and imports of 'coordkit' inside it resolve to this coord.
 *
 * @example
 * const module = await importModule(ctx.config.worker, `worker ${ctx.config.worker}`);
 * const Worker = module.default as new () => { run(): Promise<void> };
 */
export async function importModule(module: string, label = module): Promise<Record<string, unknown>> {
  const fail = (why: string, code?: CoordErrorCode) => new ModuleLoadError(`cannot load ${label}: ${why}`, { code });
  const isPath = module.startsWith('file:') || isAbsolute(module) || /^\.{1,2}[\\/]/.test(module) || /\.(m?js|cjs|m?ts)$/.test(module);
  const url = isPath ? moduleUrl(module) : module;
  const file = isPath ? fileURLToPath(url) : undefined;
  if (file !== undefined && !existsSync(file)) throw fail('no such file', 'COORD_ERR_MODULE_NOT_FOUND');
  if (file !== undefined && statSync(file).isDirectory()) throw fail('it is a folder, expected a .ts, .js or .mjs file', 'COORD_ERR_MODULE_NOT_FOUND');
  if (file === undefined || !reachesThisCoord(file)) await (packageHooksRegistered ??= registerPackageHooks());
  let failure: unknown;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    failure = err;
  }
  // Only a .ts file the runtime cannot run (plain Node 20) is worth a second try.
  if (!file || !TS.test(file) || (failure as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw fail(await why(failure, file));
  hooksRegistered ??= registerModuleHook(sibling('typescript-hooks'));
  let registered: boolean;
  try {
    registered = await hooksRegistered;
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!registered) throw fail(await why(failure, file));
  try {
    // A new URL: the failed import above stays failed under its own.
    return (await import(`${url}?coord-ts`)) as Record<string, unknown>;
  } catch (err) {
    throw fail(await why(err, file));
  }
}

/** The user's imports of coord's package name resolve to this coord (package-hooks.ts; on Deno, deno.json's import map does it). */
async function registerPackageHooks(): Promise<void> {
  await registerModuleHook(sibling('package-hooks'), () => {
    const { name, manifest } = ownPackage();
    return { name, parentURL: pathToFileURL(manifest).href };
  });
}

let own: { name: string; manifest: string } | undefined;
function ownPackage(): { name: string; manifest: string } {
  if (own) return own;
  const manifest = findUp(import.meta.url, 'package.json');
  own = { name: (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name, manifest };
  return own;
}

/**
 * Whether coord's package name, imported from where `file` lives, already
 * resolves to this coord (it is installed there, or the file is inside coord's
 * own folder). Then no hook is needed: registering one starts Node's hooks
 * thread and routes every later import through it, which cost a load test
 * ~90 ms of CPU in each thread before its first request.
 */
function reachesThisCoord(file: string): boolean {
  const { name, manifest } = ownPackage();
  try {
    return realpathSync(createRequire(file).resolve(`${name}/package.json`)) === realpathSync(manifest);
  } catch {
    return false; // not installed there (a plugin made outside a project): the hook gives it this coord
  }
}

/** A module beside this one: .js once built, .ts from the sources. */
function sibling(name: string): string {
  const self = import.meta.url;
  return new URL(`./${name}${self.slice(self.lastIndexOf('.'))}`, self).href;
}

/** One line on why an import failed: the error's kind (unless plain Error) and first line, and where a syntax error is. */
async function why(err: unknown, file: string | undefined): Promise<string> {
  const e = err as { code?: string; message?: string };
  const first = (e?.message ?? String(err)).split('\n')[0]!.trim();
  if (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return first;
  const kind = err instanceof Error && err.name !== 'Error' ? `${err.name}: ` : '';
  const place = err instanceof SyntaxError && file && !first.includes(file) ? await syntaxErrorPlace(err, file) : undefined;
  return `${kind}${first}${place ? ` (at ${place})` : ''}`;
}

/**
 * Where a syntax error is: Node 20 does not say for a dynamic import, so the
 * file is parsed again (sucrase, loaded only then).
 */
async function syntaxErrorPlace(err: SyntaxError, file: string): Promise<string | undefined> {
  const fromStack = /^file:\/\/(\S+:\d+)$/m.exec(err.stack ?? '')?.[1];
  if (fromStack) return decodeURIComponent(fromStack);
  const { transform } = await import('sucrase');
  try {
    transform(await readFile(file, 'utf8'), { transforms: TS.test(file) ? ['typescript'] : [], filePath: file });
    return undefined;
  } catch (problem) {
    const loc = (problem as { loc?: { line: number; column: number } }).loc;
    return loc ? `${file}:${loc.line}:${loc.column}` : undefined;
  }
}
