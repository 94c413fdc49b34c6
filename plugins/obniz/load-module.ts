// Imports a module the user names by path or package name (a worker, a
// device-list function, the device class), .ts included, on Node and Deno
// (core/typescript-modules.ts). A failure is one ModuleLoadError line:
// `cannot load worker ./w.ts: …`.
import { importModule } from '../../core/typescript-modules.ts';

export { ModuleLoadError } from '../../core/typescript-modules.ts';

/** Imports a user module by path (resolved against the working directory) or package name; `what` names it in errors ('worker'). */
export function importUserModule(spec: string, what: string): Promise<Record<string, unknown>> {
  return importModule(spec, `${what} ${spec}`);
}
