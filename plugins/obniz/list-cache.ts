// The manager's copy of every slave's distribution list, read incrementally: a
// sync reads each list's change stamp (obniz:lists, bumped by every coord script
// that changes the list) and length, and re-reads only the lists where either
// moved, instead of every entry (~325 B a device) every minute. obniz-app-sdk
// managers do not bump stamps: what they add, move or remove changes a length;
// an install they rewrite in place is seen at the next full read, every
// FULL_READ_EVERY syncs.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { indexedSlaves } from './fleet.ts';
import { parseAssignment, type Assignment } from './values.ts';

/** Every this many reads, every list is read in full. */
export const FULL_READ_EVERY = 10;

interface CachedList {
  stamp: unknown;
  length: unknown;
  entries: Map<string, Assignment>;
}

export class ListCache {
  private readonly lists = new Map<string, CachedList>();
  private reads = 0;
  /** Entries fetched by the last read (for tests and logs). */
  lastFetched = 0;


  constructor(private readonly ctx: Ctx) {}

  /** Every assignment in the lists of the indexed slaves: obnizId → slave and entry. */
  async read(): Promise<Map<string, { slave: string; entry: Assignment }>> {
    const { ctx } = this;
    const names = await indexedSlaves(ctx);
    const full = this.reads++ % FULL_READ_EVERY === 0;
    const meta = await ctx.backend.pipeline(
      names.flatMap((name): Command[] => [['HGET', ctx.keys.listStamps(), name], ['HLEN', ctx.keys.workers({ name })]]),
    );
    const stale = names.filter((name, i) => {
      const cached = this.lists.get(name);
      return full || !cached || cached.stamp !== meta[2 * i] || cached.length !== meta[2 * i + 1];
    });
    // the stamps were read before the entries: a change in between is seen again next time
    const bodies = await ctx.backend.pipeline(stale.map((name): Command => ['HGETALL', ctx.keys.workers({ name })]));
    this.lastFetched = 0;
    const at = new Map(names.map((name, i) => [name, i]));
    stale.forEach((name, i) => {
      const flat = bodies[i];
      const entries = new Map<string, Assignment>();
      if (Array.isArray(flat)) {
        for (let j = 0; j < flat.length; j += 2) {
          const entry = parseAssignment(flat[j + 1] as string);
          if (entry) entries.set(flat[j] as string, entry);
        }
      }
      this.lastFetched += entries.size;
      const k = at.get(name)!;
      this.lists.set(name, { stamp: meta[2 * k], length: meta[2 * k + 1], entries });
    });
    for (const name of this.lists.keys()) if (!at.has(name)) this.lists.delete(name);
    const out = new Map<string, { slave: string; entry: Assignment }>();
    for (const name of names) for (const [id, entry] of this.lists.get(name)!.entries) out.set(id, { slave: name, entry });
    return out;
  }
}
