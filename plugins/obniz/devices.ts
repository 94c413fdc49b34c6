// A device list as users write it (a file, a URL's body, a function's result),
// checked once: a list of devices, each with a string id, or of bare ids; or
// {"devices": [...]}. Every problem names where it is and what was expected.
import { isObject, type DeviceInfo } from './values.ts';

export class DeviceListError extends Error {
  override readonly name = 'DeviceListError';
}

/** The devices of a parsed list, in order; throws DeviceListError naming `where` and the first problem. */
export function normalizeDevices(value: unknown, where: string): DeviceInfo[] {
  const list = isObject(value) && 'devices' in value ? value.devices : value;
  const at = isObject(value) && 'devices' in value ? 'devices' : '';
  if (!Array.isArray(list)) {
    throw new DeviceListError(`${where}: expected a list of devices (or {"devices": [...]}), got ${describe(list)}`);
  }
  const seen = new Set<string>();
  return list.map((item: unknown, i) => {
    const path = `${at}[${i}]`;
    const device = typeof item === 'string' ? { id: item } : item;
    if (!isObject(device)) throw new DeviceListError(`${where}: ${path}: expected a device {"id": "…", …} or an id, got ${describe(item)}`);
    const id: unknown = device.id;
    if (typeof id !== 'string' || !/^[^:\s]+$/.test(id)) {
      throw new DeviceListError(`${where}: ${path}.id: expected an obniz id (text without spaces or ':'), got ${describe(id)}`);
    }
    if (seen.has(id)) throw new DeviceListError(`${where}: ${path}.id: "${id}" is listed twice`);
    seen.add(id);
    return device as DeviceInfo;
  });
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}
