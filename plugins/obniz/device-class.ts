// The obniz device class (the `obniz` npm package, or a stand-in a test or a
// user names by path). Optional: without it workers run without a device
// connection and the onObniz* hooks are not called.
import { type Logger, ModuleLoadError } from '../../entries/plugin.ts';
import type { ObnizConfig } from './config.ts';
import { importUserModule } from './load-module.ts';

/** What coord uses of an obniz.js instance. */
export interface DeviceConnection {
  onconnect?: (obniz: DeviceConnection) => unknown;
  onloop?: (obniz: DeviceConnection) => unknown;
  onclose?: (obniz: DeviceConnection) => unknown;
  autoConnect?: boolean;
  connect(): unknown;
  closeWait?(): Promise<unknown>;
  close?(): unknown;
}

export type DeviceClass = new (obnizId: string, options: Record<string, unknown>) => DeviceConnection;

/**
 * The device class to connect workers with, or undefined. obniz: 'off' never
 * connects; 'auto' connects when a token is set and the module loads (it is
 * optional: a missing package is one info line); 'on' requires the module.
 */
export async function loadDeviceClass(config: ObnizConfig, logger: Logger): Promise<DeviceClass | undefined> {
  if (config.obniz === 'off') return undefined;
  const token = config.appToken ?? config.obnizOptions.access_token;
  if (config.obniz === 'auto' && token === undefined) return undefined;
  let module: Record<string, unknown>;
  try {
    module = await importUserModule(config.obnizModule, 'device class');
  } catch (err) {
    if (config.obniz === 'on') throw err;
    logger.info('workers run without device connections: the obniz module did not load', { module: config.obnizModule, error: (err as Error).message });
    return undefined;
  }
  const candidate = (typeof module.default === 'function' ? module.default : (module.default as Record<string, unknown> | undefined)?.default ?? module.Obniz) as unknown;
  if (typeof candidate !== 'function') {
    throw new ModuleLoadError(`device class ${config.obnizModule}: its default export is not a class (expected the obniz class, new Obniz(id, options))`, {
      code: 'COORD_ERR_OBNIZ_DEVICE_CLASS_EXPORT',
    });
  }
  return candidate as DeviceClass;
}
