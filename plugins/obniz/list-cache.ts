// The manager's copy of every slave's distribution list, read incrementally: a
// sync reads each list's change stamp (obniz:lists, bumped by every coord script
// that changes the list) and length, and re-reads only the lists where either
// moved, instead of every entry (~325 B a device) every minute. obniz-app-sdk
// managers do not bump stamps: what they add, move or remove changes a length;
// an install they rewrite in place is seen at the next full read (the manager
// asks for one every FULL_READ_EVERY syncs).
// Per device it keeps the id, its install's fingerprint and its slot in the
// index (ListIndex), not the entry: about 130 bytes a device rather than the
// parsed install's several hundred, so a manager of 1,000,000 devices stays
// within a few hundred MB.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { indexedSlaves } from './fleet.ts';
import { installFingerprint } from './fingerprint.ts';
import { parseAssignment } from './values.ts';
import { collectGarbage } from './collect.ts';
import { IdTable } from './id-table.ts';

/** Entries fetched between full collections in a refresh. */
const COLLECT_EVERY = 250_000;

/** Every this many syncs, every list is read in full. */
export const FULL_READ_EVERY = 10;
/**
 * Lists re-read per pipeline: 10 lists of 200 devices are about 650 KB of replies at a time. Replies
 * small enough die young: with 100 lists (6.5 MB) a pipeline's replies outlived V8's young generation,
 * and a full read of 1,000,000 entries piled up 650 MB of garbage in the old one before it was collected.
 */
const LISTS_PER_READ = 10;

/** A fingerprint the entry has not: its install must be compared in full (an entry of another shape). */
export const UNKNOWN = -1;

interface CachedList {
  stamp: unknown;
  length: unknown;
  ids: string[];
  /** Where each device is in the index. */
  slots: number[];
}

/** The stamps and lengths of the indexed slaves' lists at one moment. */
export interface ListLook {
  names: string[];
  meta: unknown[];
}

/**
 * Every listed device: obnizId → slot, and per slot the id, the slave and the install's
 * fingerprint (arrays rather than an object a device; UNKNOWN where the entry is not in the
 * usual shape). Kept between syncs and changed only where a list is read with other devices:
 * built anew each sync, its 1,000,000-entry map cost more than the rest of a diff sync grew.
 */
export class ListIndex {
  /** '' where dropped. */
  readonly ids: string[] = [];
  /** obnizId → its slot (-1: not listed). */
  readonly slots = new IdTable((slot) => this.ids[slot]!);
  readonly slaves: string[] = [];
  readonly fingerprints: number[] = [];
  /** Slots dropped so far (their list re-read with other devices, or gone). */
  dropped = 0;

  add(id: string, slave: string, fingerprint: number): number {
    const slot = this.ids.length;
    this.ids.push(id);
    this.slots.set(id, slot);
    this.slaves.push(slave);
    this.fingerprints.push(fingerprint);
    return slot;
  }

  drop(slot: number): void {
    const id = this.ids[slot]!;
    // an id in two lists is indexed at the last one added
    if (this.slots.get(id) === slot) this.slots.delete(id);
    this.ids[slot] = '';
    this.dropped++;
  }
}

export class ListCache {
  private readonly lists = new Map<string, CachedList>();
  private listed = new ListIndex();
  /** The previous contents of the lists the last refresh found shorter or dropped (where devices were). */
  private replaced: { name: string; ids: string[] }[] = [];
  /** Entries fetched by the last refresh (for tests and logs). */
  lastFetched = 0;

  constructor(private readonly ctx: Ctx) {}

  /** The lists' stamps and lengths now (one pipeline of two commands a slave). */
  async look(): Promise<ListLook> {
    const { ctx } = this;
    const names = await indexedSlaves(ctx);
    const meta = await ctx.backend.pipeline(names.flatMap((name): Command[] => [['HGET', ctx.keys.listStamps(), name], ['HLEN', ctx.keys.workers({ name })]]));
    return { names, meta };
  }

  /** Whether every list is as last read: the same slaves, stamps and lengths. */
  unchanged(look: ListLook): boolean {
    if (look.names.length !== this.lists.size) return false;
    return look.names.every((name, i) => {
      const cached = this.lists.get(name);
      return cached !== undefined && cached.stamp === look.meta[2 * i] && cached.length === look.meta[2 * i + 1];
    });
  }

  /** Re-reads the lists whose stamp or length moved since they were read (every list when `full`). */
  async refresh(look: ListLook, full = false): Promise<void> {
    const { ctx } = this;
    const { names, meta } = look;
    const stale = names.map((name, i) => [name, i] as const).filter(([name, i]) => {
      const cached = this.lists.get(name);
      return full || !cached || cached.stamp !== meta[2 * i] || cached.length !== meta[2 * i + 1];
    });
    this.replaced = [];
    this.lastFetched = 0;
    const store = (name: string, k: number, { ids, fingerprints }: { ids: string[]; fingerprints: number[] }) => {
      this.lastFetched += ids.length;
      const old = this.lists.get(name);
      if (old && sameIds(old.ids, ids)) {
        // the same devices (a full read, mostly): only an install rewritten in place moves a fingerprint
        old.slots.forEach((slot, i) => (this.listed.fingerprints[slot] = fingerprints[i]!));
        old.stamp = meta[2 * k];
        old.length = meta[2 * k + 1];
        return;
      }
      if (old) {
        // only a list that lost devices (Redis restarted empty, a slave's devices moved): a full read of
        // 1,000,000 devices would otherwise keep every old id until the next refresh
        if (ids.length < old.ids.length) this.replaced.push({ name, ids: old.ids });
        for (const slot of old.slots) this.listed.drop(slot);
      }
      const slots = ids.map((id, i) => this.listed.add(id, name, fingerprints[i]!));
      this.lists.set(name, { stamp: meta[2 * k], length: meta[2 * k + 1], ids, slots });
    };
    // a list empty at the look is not fetched (5,000 new slaves' lists are 500 round trips at a first sync)
    for (const [name, k] of stale) if (meta[2 * k + 1] === 0) store(name, k, { ids: [], fingerprints: [] });
    const fetched = stale.filter(([, k]) => meta[2 * k + 1] !== 0);
    let collected = 0;
    // the stamps were read before the entries: a change in between is seen again next time
    for (let at = 0; at < fetched.length; at += LISTS_PER_READ) {
      const part = fetched.slice(at, at + LISTS_PER_READ);
      const bodies = await ctx.backend.pipeline(part.map(([name]): Command => ['HGETALL', ctx.keys.workers({ name })]));
      part.forEach(([name, k], j) => store(name, k, readEntries(bodies[j])));
      // a read of every list: the replies' garbage collected as it goes, not let pile up to a peak
      if (this.lastFetched - collected >= COLLECT_EVERY) (collectGarbage(), (collected = this.lastFetched));
    }
    const indexed = new Set(names);
    for (const [name, old] of this.lists) {
      if (indexed.has(name)) continue;
      if (old.ids.length) this.replaced.push({ name, ids: old.ids });
      for (const slot of old.slots) this.listed.drop(slot);
      this.lists.delete(name);
    }
    // renumbered once more slots are dropped than listed
    if (this.listed.dropped > 10_000 && this.listed.dropped > this.size) this.compact();
  }

  private compact(): void {
    const before = this.listed;
    this.listed = new ListIndex();
    for (const [name, list] of this.lists) list.slots = list.ids.map((id, i) => this.listed.add(id, name, before.fingerprints[list.slots[i]!]!));
  }

  /** Devices listed, over every list. */
  get size(): number {
    let n = 0;
    for (const list of this.lists.values()) n += list.ids.length;
    return n;
  }

  /** Every listed device as last read (the same object until a refresh changes it: not to be changed). */
  index(): ListIndex {
    return this.listed;
  }

  /**
   * Where each of `ids` was listed before the last refresh replaced its list: after Redis
   * restarted empty, each device goes back to its slave if alive.
   */
  formerSlaves(ids: readonly string[]): Map<string, string> {
    const out = new Map<string, string>();
    if (!ids.length || !this.replaced.length) return out;
    const wanted = new Set(ids);
    for (const { name, ids: listed } of this.replaced) for (const id of listed) if (wanted.has(id)) out.set(id, name);
    return out;
  }
}

/** An HGETALL reply as ids and fingerprints; an entry that does not parse is left out (it lists no device). */
function readEntries(flat: unknown): { ids: string[]; fingerprints: number[] } {
  const ids: string[] = [];
  const fingerprints: number[] = [];
  if (!Array.isArray(flat)) return { ids, fingerprints };
  for (let j = 0; j < flat.length; j += 2) {
    const text = flat[j + 1] as string;
    let fingerprint = installFingerprint(text);
    if (fingerprint === undefined) {
      if (!parseAssignment(text)) continue;
      fingerprint = UNKNOWN;
    }
    ids.push(flat[j] as string);
    fingerprints.push(fingerprint);
  }
  return { ids, fingerprints };
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
