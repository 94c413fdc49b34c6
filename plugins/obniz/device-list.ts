// A device list as the manager holds it between reading and applying it: per
// device its id, its DeviceInfo as JSON text (what the scripts write as its
// install) and that text's fingerprint, in arrays rather than an object a
// device. 1,000,000 devices are about 250 MB this way, 50 MB where the texts
// are left out (devices neither new nor changed); as parsed objects beside
// their file's text they were over 800 MB.
import { listedTwice, toDeviceInfo } from './devices.ts';
import { fingerprint } from './fingerprint.ts';
import type { DeviceInfo } from './values.ts';

/** Devices as ids and their installs' JSON texts (texts[i] is the install of ids[i]). */
export interface DeviceTexts {
  readonly ids: string[];
  readonly texts: string[];
}

/** A whole list: `fingerprints[i]` is the fingerprint of device i's text (texts[i] or, where that is '', not kept). */
export interface DeviceList extends DeviceTexts {
  readonly fingerprints: number[];
}

/** Whether a device read keeps its text (new or maybe changed: the diff reads it), by its id and fingerprint. */
export type KeepText = (id: string, fingerprint: number) => boolean;

/** Devices already checked (normalizeDevices, a webhook's events) as texts. */
export function toDeviceList(devices: readonly DeviceInfo[]): DeviceList {
  const texts = devices.map((d) => JSON.stringify(d));
  return { ids: devices.map((d) => d.id), texts, fingerprints: texts.map((text) => fingerprint(text)) };
}

/** The devices at `at` (positions in `list`), in that order. */
export function pick(list: DeviceTexts, at: readonly number[]): DeviceTexts {
  return { ids: at.map((i) => list.ids[i]!), texts: at.map((i) => list.texts[i]!) };
}

/** `a` then `b`. */
export function concat(a: DeviceTexts, b: DeviceTexts): DeviceTexts {
  return b.ids.length ? { ids: [...a.ids, ...b.ids], texts: [...a.texts, ...b.texts] } : a;
}

/**
 * A list built an item at a time, each item checked as normalizeDevices checks
 * it (the same errors, naming `where: [i]`), so a list read a slice at a time
 * never exists as objects all at once.
 */
export class DeviceListBuilder {
  readonly list: DeviceList = { ids: [], texts: [], fingerprints: [] };
  private readonly seen = new Set<string>();

  constructor(
    private readonly where: string,
    private readonly keep: KeepText = () => true,
  ) {}

  add(item: unknown): void {
    const i = this.list.ids.length;
    const device = toDeviceInfo(item, `${this.where}: [${i}]`);
    if (this.seen.has(device.id)) throw listedTwice(this.where, '', i, device.id);
    this.seen.add(device.id);
    const text = JSON.stringify(device);
    const f = fingerprint(text);
    this.list.ids.push(device.id);
    this.list.texts.push(this.keep(device.id, f) ? text : '');
    this.list.fingerprints.push(f);
  }
}
