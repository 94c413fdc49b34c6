// A device list as users write it (a file, a URL's body, a function's result,
// the obniz Cloud API), checked once: a list of devices, each with a string
// id, or of bare ids; or {"devices": [...]}. Every problem names where it is
// and what was expected. Each device comes out as obniz-app-sdk's DeviceInfo
// has it, whatever the source, so SDK workers and coord workers read the same
// shape: `configs` a JSON string (an object in the list is encoded, none is
// "{}"), `hardware` a string ("unknown" when the list names none).
import { DeviceListError } from './errors.ts';
import { isObject, type DeviceInfo } from './values.ts';

/**
 * Device ids: an obniz id (NNNN-NNNN), or another id of at most 64 letters,
 * digits, '.', '_' and '-' (a test device, another vendor's): an id becomes a
 * field of Redis hashes, a log field and a worker's name, so neither its length
 * nor its characters are left open.
 */
export const MAX_ID_LENGTH = 64;
const OBNIZ_ID = /^\d{4}-\d{4}$/;
const OTHER_ID = new RegExp(`^[A-Za-z0-9._-]{1,${MAX_ID_LENGTH}}$`);
const ID_RULE = `an obniz id (NNNN-NNNN) or an id of 1 to ${MAX_ID_LENGTH} letters, digits, '.', '_' or '-'`;

/** The longest `configs` (JSON text) a device may have: 64 KiB. */
export const MAX_CONFIGS_LENGTH = 64 * 1024;
const MAX_HARDWARE_LENGTH = 64;

export function isDeviceId(id: string): boolean {
  return OBNIZ_ID.test(id) || OTHER_ID.test(id);
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
    if (seen.has(device.id)) throw listedTwice(where, at, i, device.id);
    seen.add(device.id);
    return device;
  });
}

export function listedTwice(where: string, at: string, i: number, id: string): DeviceListError {
  return new DeviceListError(`${where}: ${at}[${i}].id: "${id}" is listed twice`, { code: 'COORD_ERR_OBNIZ_DEVICE_LISTED_TWICE' });
}

/** One device (or bare id) in the SDK's DeviceInfo shape; throws DeviceListError naming `where`. */
export function toDeviceInfo(item: unknown, where: string): DeviceInfo {
  const device = typeof item === 'string' ? { id: item } : item;
  if (!isObject(device)) throw new DeviceListError(`${where}: expected a device {"id": "…", …} or an id, got ${describe(item)}`);
  const id: unknown = device.id;
  if (typeof id !== 'string' || !isDeviceId(id)) {
    throw new DeviceListError(`${where}.id: expected ${ID_RULE}, got ${describe(id)}`, { code: 'COORD_ERR_OBNIZ_DEVICE_ID' });
  }
  const { configs, hardware } = device;
  if (hardware !== undefined && hardware !== null && (typeof hardware !== 'string' || hardware.length > MAX_HARDWARE_LENGTH)) {
    throw new DeviceListError(`${where}.hardware: expected text of at most ${MAX_HARDWARE_LENGTH} characters such as "obnizb1", got ${describe(hardware)}`);
  }
  const text = typeof configs === 'string' ? configs : configs === undefined || configs === null ? '{}' : JSON.stringify(configs);
  if (text.length > MAX_CONFIGS_LENGTH) {
    throw new DeviceListError(`${where}.configs: expected at most ${MAX_CONFIGS_LENGTH / 1024} KiB of JSON text, got ${Math.ceil(text.length / 1024)} KiB`);
  }
  // already in shape: the same object (never changed here), not a copy of a million devices
  if (typeof hardware === 'string' && hardware && text === configs) return device as DeviceInfo;
  return { ...device, id, hardware: hardware || UNKNOWN_HARDWARE, configs: text };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string' && value.length > 40) return `a string of ${value.length} characters ("${value.slice(0, 20)}…")`;
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}
