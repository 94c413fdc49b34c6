// A sorted set as ioredis-mock stores one (a Map of member → {score, value}) that
// also keeps its entries in Redis's order (score, then member), updated on every
// set and delete. ioredis-mock's own commands keep working on it as a Map; the
// range commands in zset-ranges.ts read the order with binary searches, so a
// range costs O(log n + what it returns) instead of a sort of the whole set.

export interface ZEntry {
  readonly score: number;
  readonly value: string;
}

/** Redis's order: by score, then by member (ioredis-mock compares members as JS strings). */
export function compareEntries(a: ZEntry, b: ZEntry): number {
  if (a.score !== b.score) return a.score < b.score ? -1 : 1;
  return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
}

export class SortedSetMap extends Map<string, ZEntry> {
  /** Every entry, in order. */
  readonly order: ZEntry[] = [];

  static from(map: ReadonlyMap<string, ZEntry>): SortedSetMap {
    const sorted = new SortedSetMap();
    for (const [member, entry] of map) sorted.set(member, entry);
    return sorted;
  }

  override set(member: string, entry: ZEntry): this {
    const old = super.get(member);
    if (old) this.order.splice(this.indexOf(old), 1);
    this.order.splice(this.firstAtOrAfter((e) => compareEntries(e, entry) >= 0), 0, entry);
    return super.set(member, entry);
  }

  override delete(member: string): boolean {
    const old = super.get(member);
    if (!old) return false;
    this.order.splice(this.indexOf(old), 1);
    return super.delete(member);
  }

  override clear(): void {
    this.order.length = 0;
    super.clear();
  }

  /** The rank of a stored entry. */
  indexOf(entry: ZEntry): number {
    return this.firstAtOrAfter((e) => compareEntries(e, entry) >= 0);
  }

  /** The first index whose entry satisfies `atOrAfter` (which must be false, then true, along the order). */
  firstAtOrAfter(atOrAfter: (entry: ZEntry) => boolean): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (atOrAfter(this.order[mid]!)) high = mid;
      else low = mid + 1;
    }
    return low;
  }
}
