// The manager's diff: the device list against the lists as the manager last
// read them (list-cache.ts), by fingerprint. A device whose install's
// fingerprint differs from its entry's is only a candidate: its entry is read
// and compared in full (sameInstall: key order and deviceLiveInfo do not count),
// so a sync reads entries only for the devices that may have changed.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import type { ListIndex } from './list-cache.ts';
import { parseAssignment, sameInstall, type DeviceInfo } from './values.ts';

export interface ListDiff {
  adds: DeviceInfo[];
  updates: DeviceInfo[];
  removes: string[];
  /** obnizId → slave of the updated and removed devices (spares the scripts a lookup). */
  owners: Map<string, string>;
}

/** Candidate entries read per pipeline. */
const ENTRIES_PER_READ = 1000;

/** `fingerprints[i]` is the fingerprint of devices[i]'s JSON text (what assignDevices writes as its install). */
export async function diffList(ctx: Ctx, devices: readonly DeviceInfo[], fingerprints: readonly number[], index: ListIndex): Promise<ListDiff> {
  const listed = new Uint8Array(index.slaves.length);
  const adds: DeviceInfo[] = [];
  const candidates: { device: DeviceInfo; slave: string }[] = [];
  devices.forEach((device, i) => {
    const slot = index.slots.get(device.id);
    if (slot === undefined) return void adds.push(device);
    listed[slot] = 1;
    if (index.fingerprints[slot] !== fingerprints[i]) candidates.push({ device, slave: index.slaves[slot]! });
  });
  const owners = new Map<string, string>();
  const removes: string[] = [];
  for (const [id, slot] of index.slots) {
    if (listed[slot]) continue;
    removes.push(id);
    owners.set(id, index.slaves[slot]!);
  }
  const updates: DeviceInfo[] = [];
  for (let at = 0; at < candidates.length; at += ENTRIES_PER_READ) {
    const part = candidates.slice(at, at + ENTRIES_PER_READ);
    const entries = await ctx.backend.pipeline(part.map(({ device, slave }): Command => ['HGET', ctx.keys.workers({ name: slave }), device.id]));
    part.forEach(({ device, slave }, j) => {
      const text = entries[j];
      const entry = parseAssignment(typeof text === 'string' ? text : undefined);
      if (entry && sameInstall(entry.install, device)) return;
      updates.push(device);
      owners.set(device.id, slave);
    });
  }
  return { adds, updates, removes, owners };
}
