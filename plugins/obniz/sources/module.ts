// A device list from a user function: a module whose default export (or
// `devices` export) is a function returning the list (or a promise of it).
import { ModuleLoadError } from '../../../entries/plugin.ts';
import { normalizeDevices } from '../devices.ts';
import { SourceError } from '../errors.ts';
import { importUserModule } from '../load-module.ts';
import type { DeviceSource } from './source.ts';

export function moduleSource(path: string): DeviceSource {
  let fn: (() => unknown) | undefined;
  return {
    description: `module ${path}`,
    async list() {
      if (!fn) {
        const module = await importUserModule(path, 'device list module');
        const exported = module.default ?? module.devices;
        if (typeof exported !== 'function') throw new ModuleLoadError(`device list module ${path}: its default export is not a function (export default async () => [{ id: '…' }])`, {
            code: 'COORD_ERR_OBNIZ_DEVICE_LIST_MODULE',
          });
        fn = exported as () => unknown;
      }
      let value: unknown;
      try {
        value = await fn();
      } catch (err) {
        throw new SourceError(`device list module ${path}: the function threw: ${(err as Error).message}`, { code: 'COORD_ERR_OBNIZ_DEVICE_LIST_FUNCTION', cause: err });
      }
      return normalizeDevices(value, `device list module ${path}`);
    },
  };
}
