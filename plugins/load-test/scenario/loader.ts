// Loads a scenario module by path, .ts included, on Node and on Deno
// (core/typescript-modules.ts). A scenario that does not load is one line:
// which file, and why.
import { resolve } from 'node:path';
import { importModule, ModuleLoadError } from '../../../entries/plugin.ts';
import { checkScenario, type CheckedScenario } from './scenario.ts';
import { InputError } from '../errors.ts';

export async function loadScenario(path: string, cwd = process.cwd()): Promise<CheckedScenario> {
  let module: Record<string, unknown>;
  try {
    module = await importModule(resolve(cwd, path), `scenario ${path}`);
  } catch (err) {
    throw err instanceof ModuleLoadError ? new InputError(err.message) : err;
  }
  return checkScenario(module.default ?? module.scenario, path);
}
