// Reading the values obniz-app-sdk and coord write: timestamps in ms or in
// seconds, and workers:{name} entries.

/**
 * A device as obniz-app-sdk's DeviceInfo has it: an id, a hardware, configs
 * as a JSON string, and whatever else the list gives (the obniz Cloud's
 * install fields). Lists are normalised to it (devices.ts); entries an SDK
 * manager wrote are taken as they are.
 */
export interface DeviceInfo {
  id: string;
  hardware?: string;
  configs?: string;
  [field: string]: unknown;
}

/** One entry of a slave's distribution list. */
export interface Assignment {
  install: DeviceInfo;
  instanceName: string;
  /** When it was assigned, in ms (entries written in seconds are converted). */
  updatedMs: number;
}

/** Timestamps below this are seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const SECONDS_BELOW = 100_000_000_000;

/** A heartbeat or updatedMillisecond value in ms, whether written in ms or in seconds; NaN when unreadable. */
export function toMs(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  return n < SECONDS_BELOW ? n * 1000 : n;
}

/** Parses a workers:{name} entry; undefined when it is not one. */
export function parseAssignment(text: string | null | undefined): Assignment | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || !isObject(value.install) || typeof value.install.id !== 'string') return undefined;
  return {
    install: value.install as DeviceInfo,
    instanceName: typeof value.instanceName === 'string' ? value.instanceName : '',
    updatedMs: toMs(value.updatedMillisecond),
  };
}

/**
 * JSON with object keys sorted, so two equal devices compare equal whatever
 * their key order; an empty list reads as an empty object, because the SDK's
 * Lua (cjson) re-encodes every entry it moves and turns `[]` into `{}`.
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (Array.isArray(v) && v.length === 0) return {};
    return isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v;
  });
}

/** Whether two installs differ in what a worker sees (the SDK ignores deviceLiveInfo the same way). */
export function sameInstall(a: DeviceInfo, b: DeviceInfo): boolean {
  // the common case first: the same text (a list re-read unchanged), 10× cheaper than sorting keys
  if (a.deviceLiveInfo === undefined && b.deviceLiveInfo === undefined && JSON.stringify(a) === JSON.stringify(b)) return true;
  return stableJson({ ...a, deviceLiveInfo: undefined }) === stableJson({ ...b, deviceLiveInfo: undefined });
}

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
