// Imports a module the user names by path (a worker, a device-list function,
// the device class): .js/.mjs as they are; .ts on Deno natively and on Node
// through ts-hooks.ts (the `typescript` package transpiles it). Every failure
// is one line: which module, what went wrong, what to do.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeno, moduleUrl } from '../../core/platform.ts';

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
    if (!(isPath && TS.test(spec) && !isDeno && (err as { code?: string }).code === 'ERR_UNKNOWN_FILE_EXTENSION')) throw loadError(err, spec, what);
  }
  // Node without a TypeScript loader: transpile as it loads (a fresh URL, the failed one stays cached).
  await registerTsHooks(spec, what);
  try {
    return (await import(`${url}?coord-ts`)) as Record<string, unknown>;
  } catch (err) {
    throw loadError(err, spec, what);
  }
}

async function registerTsHooks(spec: string, what: string): Promise<void> {
  hooksRegistered ??= (async () => {
    try {
      await import('typescript');
    } catch {
      throw new ModuleLoadError(`cannot load ${what} ${spec}: Node needs the typescript package to run .ts files (npm install typescript), or compile it to .js, or run coord on Deno`);
    }
    const { register } = await import('node:module');
    const self = import.meta.url;
    register(new URL(`./ts-hooks${self.slice(self.lastIndexOf('.'))}`, self).href);
  })();
  return hooksRegistered;
}

function loadError(err: unknown, spec: string, what: string): ModuleLoadError {
  const e = err as { code?: string; message?: string };
  if (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
    return new ModuleLoadError(`cannot load ${what} ${spec}: ${firstLine(e.message)}`);
  }
  const kind = err instanceof Error && err.name !== 'Error' ? `${err.name}: ` : '';
  // Node puts a syntax error's place on the first line of the stack, not in the message
  const place = err instanceof SyntaxError ? /^file:\/\/(\S+:\d+)$/m.exec(err.stack ?? '')?.[1] : undefined;
  const where = place ? ` (at ${decodeURIComponent(place)})` : '';
  return new ModuleLoadError(`cannot load ${what} ${spec}: ${kind}${firstLine(e.message ?? String(err))}${where}`);
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.trim();
}
