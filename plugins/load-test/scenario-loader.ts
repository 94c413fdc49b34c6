// Loads a scenario module by path on Node and on Deno. Deno and tap import
// TypeScript themselves; the compiled CLI on Node registers ts-hooks.ts (the
// typescript package transpiles each .ts module) the first time a .ts import
// fails. A scenario that does not load is one line: which file, and why.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError } from './parse.ts';
import { checkScenario, type CheckedScenario } from './scenario.ts';

let hooksRegistered = false;

export async function loadScenario(path: string, cwd = process.cwd()): Promise<CheckedScenario> {
  const file = resolve(cwd, path);
  if (!existsSync(file)) throw new InputError(`cannot load scenario ${path}: no such file`);
  if (statSync(file).isDirectory()) throw new InputError(`cannot load scenario ${path}: it is a folder, expected a .ts, .js or .mjs file`);
  const url = pathToFileURL(file).href;
  let module: Record<string, unknown>;
  try {
    module = await importModule(url);
  } catch (err) {
    throw new InputError(`cannot load scenario ${path}: ${firstLine(err)}`);
  }
  return checkScenario(module.default ?? module.scenario, path);
}

async function importModule(url: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.m?ts$/.test(url)) throw err;
  }
  if (!hooksRegistered) {
    const { register } = await import('node:module');
    register(new URL('./ts-hooks.js', import.meta.url));
    hooksRegistered = true;
  }
  // A new URL: the failed import above stays failed under its own.
  return (await import(`${url}?ts`)) as Record<string, unknown>;
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  return text.split('\n')[0]!;
}
