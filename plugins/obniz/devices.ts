// A device list as users write it (a file, a URL's body, a function's result,
// the obniz Cloud API), checked once: a list of devices, each with a string
// id, or of bare ids; or {"devices": [...]}. Every problem names where it is
// and what was expected. Each device comes out as obniz-app-sdk's DeviceInfo
// has it, whatever the source, so SDK workers and coord workers read the same
// shape: `configs` a JSON string (an object in the list is encoded, none is
// "{}"), `hardware` a string ("unknown" when the list names none).
import { isObject, type DeviceInfo } from './values.ts';

export class DeviceListError extends Error {
  override readonly name = 'DeviceListError';
}

/** The hardware of a device whose list names none (the SDK's DeviceInfo requires one). */
export const UNKNOWN_HARDWARE = 'unknown';

/** The devices of a parsed list, in order; throws DeviceListError naming `where` and the first problem. */
export function normalizeDevices(value: unknown, where: string): DeviceInfo[] {
  const list = isObject(value) && 'devices' in value ? value.devices : value;
  const at = isObject(value) && 'devices' in value ? 'devices' : '';
  if (!Array.isArray(list)) {
    throw new DeviceListError(`${where}: expected a list of devices (or {"devices": [...]}), got ${describe(list)}`);
  }
  const seen = new Set<string>();
  return list.map((item: unknown, i) => {
    const device = toDeviceInfo(item, `${where}: ${at}[${i}]`);
    if (seen.has(device.id)) throw new DeviceListError(`${where}: ${at}[${i}].id: "${device.id}" is listed twice`);
    seen.add(device.id);
    return device;
  });
}

/** One device (or bare id) in the SDK's DeviceInfo shape; throws DeviceListError naming `where`. */
export function toDeviceInfo(item: unknown, where: string): DeviceInfo {
  const device = typeof item === 'string' ? { id: item } : item;
  if (!isObject(device)) throw new DeviceListError(`${where}: expected a device {"id": "…", …} or an id, got ${describe(item)}`);
  const id: unknown = device.id;
  if (typeof id !== 'string' || !/^[^:\s]+$/.test(id)) {
    throw new DeviceListError(`${where}.id: expected an obniz id (text without spaces or ':'), got ${describe(id)}`);
  }
  const { configs, hardware } = device;
  if (hardware !== undefined && hardware !== null && typeof hardware !== 'string') {
    throw new DeviceListError(`${where}.hardware: expected text such as "obnizb1", got ${describe(hardware)}`);
  }
  return {
    ...device,
    id,
    hardware: hardware || UNKNOWN_HARDWARE,
    configs: typeof configs === 'string' ? configs : configs === undefined || configs === null ? '{}' : JSON.stringify(configs),
  };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}
