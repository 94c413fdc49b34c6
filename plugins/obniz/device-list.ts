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

/**
 * What a read does with each device, by its id and its install's fingerprint, in the list's order:
 * DROP its text, KEEP it (new or maybe changed: the diff reads it), or fail, the id being listed
 * earlier in the read (TWICE). The manager checks against the lists it indexed (diff.ts ReadDiff),
 * so a read of 1,000,000 listed devices builds no set of 1,000,000 ids.
 */
export type ReadCheck = (id: string, fingerprint: number) => number;
export const DROP = 0;
export const KEEP = 1;
export const TWICE = 2;

/** Every text kept; an id seen twice found with a set. */
export function keepAll(): ReadCheck {
  const seen = new Set<string>();
  return (id) => (seen.has(id) ? TWICE : (seen.add(id), KEEP));
}

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

  constructor(
    private readonly where: string,
    private readonly check: ReadCheck = keepAll(),
  ) {}

  /**
   * `source`, `start`, `end`: the item's own text, where the reader has it; `spaced`: whether it has
   * whitespace outside its strings. A device in shape (toDeviceInfo returned the item itself) whose
   * text has none keeps that text as its install and is fingerprinted in place: no JSON.stringify,
   * and no string a device unless it is kept (at 1,000,000 devices, 1.7 CPU-s and 190 MB of garbage a
   * read). The text may differ from JSON.stringify's in escapes or numbers (\u00e9, 1.50): the
   * same value, written byte for byte and fingerprinted as written.
   */
  add(item: unknown, source?: string, start = 0, end = 0, spaced = true): void {
    const i = this.list.ids.length;
    const device = toDeviceInfo(item, `${this.where}: [${i}]`);
    const own = source !== undefined && !spaced && device === item;
    const text = own ? '' : JSON.stringify(device);
    const f = own ? fingerprint(source, start, end) : fingerprint(text);
    const what = this.check(device.id, f);
    if (what === TWICE) throw listedTwice(this.where, '', i, device.id);
    this.list.ids.push(device.id);
    this.list.texts.push(what === KEEP ? (own ? copyOf(source, start, end) : text) : '');
    this.list.fingerprints.push(f);
  }
}

/**
 * source[start, end) as a string of its own. A slice would keep its whole slice of the file
 * alive while the text waits to be sent (V8 slices long strings by reference): at a first sync of
 * 1,000,000 devices that moved most of the file into the old generation, a 600 MB peak. Joined to a
 * character and cut again, it is copied.
 */
function copyOf(source: string, start: number, end: number): string {
  return ` ${source.slice(start, end)}`.slice(1);
}
