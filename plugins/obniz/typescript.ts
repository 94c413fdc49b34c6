// The `typescript` package, for transpiling users' .ts modules on Node: from
// coord's own dependencies, else from the project in the working directory.
// Optional: undefined when neither has it.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type TypeScript = typeof import('typescript');

/** The package's file URL, without loading it (loading takes a second or more). */
export function resolveTypescript(): string | undefined {
  for (const base of [import.meta.url, join(process.cwd(), 'noop.js')]) {
    try {
      return pathToFileURL(createRequire(base).resolve('typescript')).href;
    } catch {
      // not installed there
    }
  }
  return undefined;
}

export async function loadTypescript(): Promise<TypeScript | undefined> {
  const url = resolveTypescript();
  if (!url) return undefined;
  const module = (await import(url)) as TypeScript & { default?: TypeScript };
  return module.default ?? module;
}
