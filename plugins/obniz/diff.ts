// The manager's diff: the device list against the lists as the manager last
// read them (list-cache.ts), by fingerprint. A device whose install's
// fingerprint differs from its entry's is only a candidate: its entry is read
// and compared in full (sameInstall: key order and deviceLiveInfo do not count),
// so a sync reads entries only for the devices that may have changed.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { pick, type DeviceList, type DeviceTexts } from './device-list.ts';
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

export async function diffList(ctx: Ctx, devices: DeviceList, index: ListIndex): Promise<ListDiff> {
  const listed = new Uint8Array(index.slaves.length);
  const adds: number[] = [];
  const candidates: { i: number; slave: string }[] = [];
  devices.ids.forEach((id, i) => {
    const slot = index.slots.get(id);
    if (slot === undefined) return void adds.push(i);
    listed[slot] = 1;
    if (index.fingerprints[slot] !== devices.fingerprints[i]) candidates.push({ i, slave: index.slaves[slot]! });
  });
  const owners = new Map<string, string>();
  const removes: string[] = [];
  for (const [id, slot] of index.slots) {
    if (listed[slot]) continue;
    removes.push(id);
    owners.set(id, index.slaves[slot]!);
  }
  const updates: number[] = [];
  for (let at = 0; at < candidates.length; at += ENTRIES_PER_READ) {
    const part = candidates.slice(at, at + ENTRIES_PER_READ);
    const entries = await ctx.backend.pipeline(part.map(({ i, slave }): Command => ['HGET', ctx.keys.workers({ name: slave }), devices.ids[i]!]));
    part.forEach(({ i, slave }, j) => {
      const text = entries[j];
      const entry = parseAssignment(typeof text === 'string' ? text : undefined);
      if (entry && sameInstall(entry.install, JSON.parse(devices.texts[i]!))) return;
      updates.push(i);
      owners.set(devices.ids[i]!, slave);
    });
  }
  return { adds: pick(devices, adds), updates: pick(devices, updates), removes, owners };
}
