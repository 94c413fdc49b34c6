// Imports a module the user names by path or package name (a worker, a
// device-list function, the device class), .ts included, on Node and Deno
// (the kit's importModule). A failure is one ModuleLoadError line (the kit's
// too): `cannot load worker ./w.ts: …`.
import { importModule } from '../../entries/plugin.ts';

/** Imports a user module by path (resolved against the working directory) or package name; `what` names it in errors ('worker'). */
export function importUserModule(spec: string, what: string): Promise<Record<string, unknown>> {
  return importModule(spec, `${what} ${spec}`);
}
