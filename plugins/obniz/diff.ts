// The manager's diff: the device list against the lists as the manager last
// read them (list-cache.ts), by fingerprint. A device whose install's
// fingerprint differs from its entry's is only a candidate: its entry is read
// and compared in full (sameInstall: key order and deviceLiveInfo do not count),
// so a sync reads entries only for the devices that may have changed.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { DROP, KEEP, TWICE, pick, type DeviceList, type DeviceTexts } from './device-list.ts';
import { IdTable } from './id-table.ts';
import type { ListIndex } from './list-cache.ts';
import { parseAssignment, sameInstall } from './values.ts';

export interface ListDiff {
  adds: DeviceTexts;
  updates: DeviceTexts;
  removes: string[];
  /** obnizId → slave of the updated and removed devices (spares the scripts a lookup). */
  owners: Map<string, string>;
}

/** Candidate entries read per pipeline. */
const ENTRIES_PER_READ = 1000;

/**
 * The diff's first half, done as the list is read (its `check`, one lookup a device): which
 * devices are new (`adds`, positions in the list), which listed with another fingerprint
 * (`candidates`, and their slots), which listed devices the list names (`listed`, by slot),
 * and an id listed twice, found with those marks rather than a set of every id.
 */
export class ReadDiff {
  readonly adds: number[] = [];
  readonly candidates: number[] = [];
  readonly candidateSlots: number[] = [];
  readonly listed: Uint8Array;
  /** Ids not listed, seen so far, in the order of `adds` (for those, a table finds one named twice). */
  private readonly freshIds: string[] = [];
  private readonly fresh = new IdTable((k) => this.freshIds[k]!);
  private at = 0;

  constructor(private readonly index: ListIndex) {
    this.listed = new Uint8Array(index.slaves.length);
  }

  readonly check = (id: string, fingerprint: number): number => {
    const i = this.at++;
    const slot = this.index.slots.get(id);
    if (slot < 0) {
      if (!this.fresh.add(id, this.freshIds.length)) return TWICE;
      this.freshIds.push(id);
      this.adds.push(i);
      return KEEP;
    }
    if (this.listed[slot]) return TWICE;
    this.listed[slot] = 1;
    if (this.index.fingerprints[slot] === fingerprint) return DROP;
    this.candidates.push(i);
    this.candidateSlots.push(slot);
    return KEEP;
  };

  /** The same for a list read whole (a source that reads no slices). */
  static of(devices: DeviceList, index: ListIndex): ReadDiff {
    const read = new ReadDiff(index);
    devices.ids.forEach((id, i) => read.check(id, devices.fingerprints[i]!));
    return read;
  }
}

/** `addsDone`: the new devices were assigned as the list was read (stream-adds.ts): none is an add. */
export async function diffList(ctx: Ctx, devices: DeviceList, index: ListIndex, read: ReadDiff, addsDone = false): Promise<ListDiff> {
  const owners = new Map<string, string>();
  const removes: string[] = [];
  // the slots as they were when the read began (a refresh meanwhile, from applyEvents, may add some: not judged here)
  for (let slot = 0; slot < read.listed.length; slot++) {
    // an id in two lists is indexed at its last: the other is not a removal
    if (read.listed[slot] || index.slots.get(index.ids[slot]!) !== slot) continue;
    removes.push(index.ids[slot]!);
    owners.set(index.ids[slot]!, index.slaves[slot]!);
  }
  const { candidates, candidateSlots } = read;
  const updates: number[] = [];
  for (let at = 0; at < candidates.length; at += ENTRIES_PER_READ) {
    const part = candidates.slice(at, at + ENTRIES_PER_READ);
    const entries = await ctx.backend.pipeline(part.map((i, j): Command => ['HGET', ctx.keys.workers({ name: index.slaves[candidateSlots[at + j]!]! }), devices.ids[i]!]));
    part.forEach((i, j) => {
      const text = entries[j];
      const entry = parseAssignment(typeof text === 'string' ? text : undefined);
      if (entry && sameInstall(entry.install, JSON.parse(devices.texts[i]!))) return;
      updates.push(i);
      owners.set(devices.ids[i]!, index.slaves[candidateSlots[at + j]!]!);
    });
  }
  return { adds: pick(devices, addsDone ? [] : read.adds), updates: pick(devices, updates), removes, owners };
}
