// Imports a module the user names by path (a worker, a device-list function,
// the device class): .js/.mjs as they are; .ts on Deno natively and on Node
// through ts-hooks.ts (the `typescript` package transpiles it). Every failure
// is one line: which module, what went wrong, what to do.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { isDeno, moduleUrl } from '../../core/platform.ts';
import { loadTypescript, resolveTypescript } from './typescript.ts';

export class ModuleLoadError extends Error {
  override readonly name = 'ModuleLoadError';
}

const TS = /\.m?ts$/;
let hooksRegistered: Promise<void> | undefined;

/** Imports a user module by path (resolved against the working directory) or package name. */
export async function importUserModule(spec: string, what: string): Promise<Record<string, unknown>> {
  const isPath = /^(\.{1,2}[\\/]|[\\/]|file:)/.test(spec) || /\.(m?js|cjs|m?ts)$/.test(spec);
  const url = isPath ? moduleUrl(spec) : spec;
  if (isPath && !existsSync(fileURLToPath(url))) throw new ModuleLoadError(`cannot load ${what} ${spec}: no such file`);
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if (!(isPath && TS.test(spec) && !isDeno && (err as { code?: string }).code === 'ERR_UNKNOWN_FILE_EXTENSION')) throw await loadError(err, spec, what, url);
  }
  // Node without a TypeScript loader: transpile as it loads (a fresh URL, the failed one stays cached).
  await registerTsHooks(spec, what);
  try {
    return (await import(`${url}?coord-ts`)) as Record<string, unknown>;
  } catch (err) {
    throw await loadError(err, spec, what, url);
  }
}

async function registerTsHooks(spec: string, what: string): Promise<void> {
  hooksRegistered ??= (async () => {
    if (!resolveTypescript()) {
      throw new ModuleLoadError(`cannot load ${what} ${spec}: Node needs the typescript package to run .ts files (npm install typescript), or compile it to .js, or run coord on Deno`);
    }
    const { register } = await import('node:module');
    const self = import.meta.url;
    register(new URL(`./ts-hooks${self.slice(self.lastIndexOf('.'))}`, self).href);
  })();
  return hooksRegistered;
}

async function loadError(err: unknown, spec: string, what: string, url: string): Promise<ModuleLoadError> {
  const e = err as { code?: string; message?: string };
  if (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
    return new ModuleLoadError(`cannot load ${what} ${spec}: ${firstLine(e.message)}`);
  }
  const kind = err instanceof Error && err.name !== 'Error' ? `${err.name}: ` : '';
  const place = err instanceof SyntaxError && url.startsWith('file:') ? await syntaxErrorPlace(err, fileURLToPath(url)) : undefined;
  return new ModuleLoadError(`cannot load ${what} ${spec}: ${kind}${firstLine(e.message ?? String(err))}${place ? ` (at ${place})` : ''}`);
}

/**
 * Where a syntax error is: Node 20 does not say for a dynamic import, so the
 * file is parsed again with the typescript package when it is installed.
 */
async function syntaxErrorPlace(err: SyntaxError, path: string): Promise<string | undefined> {
  const fromStack = /^file:\/\/(\S+:\d+)$/m.exec(err.stack ?? '')?.[1];
  if (fromStack) return decodeURIComponent(fromStack);
  try {
    const ts = await loadTypescript();
    if (!ts) return undefined;
    const source = await readFile(path, 'utf8');
    const out = ts.transpileModule(source, { fileName: path, reportDiagnostics: true, compilerOptions: { allowJs: true } });
    const problem = out.diagnostics?.find((d) => d.start !== undefined && d.file);
    if (!problem) return undefined;
    const { line, character } = problem.file!.getLineAndCharacterOfPosition(problem.start!);
    return `${path}:${line + 1}:${character + 1}`;
  } catch {
    return undefined;
  }
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.trim();
}
