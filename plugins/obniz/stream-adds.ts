// The devices a sync finds new, assigned while the rest of the list is still
// being read: a chunk at a time, each planned against the lists' lengths as
// they are then (the least-loaded rule, as for a whole list), sent, and its
// texts dropped. A first sync of 1,000,000 devices then never holds every
// install text (190 MB), and Redis writes while the manager parses.
// A list found bad further on (a syntax error, a device listed twice) keeps
// the chunks already sent (a list bad in its first 100,000 new devices assigns
// none): each device one the list names, as it names it; updates and removals
// wait for a list read whole.
import type { Ctx } from './context.ts';
import { pick, type DeviceList } from './device-list.ts';
import type { ReadDiff } from './diff.ts';
import { collectGarbage } from './collect.ts';
import { slaveStates, type SlaveState } from './fleet.ts';
import { assignEach } from './scripts.ts';

/**
 * New devices a chunk: 100,000 install texts are about 20 MB, and at 5,000 slaves a chunk still
 * gives each 20, so a batch of 50 writes to few lists.
 */
const CHUNK = 100_000;

/**
 * Devices read between full collections. V8 let the old generation grow by about 200 MB of garbage
 * (texts that waited to be sent, promoted) before collecting it: a first sync of 1,000,000 peaked at
 * 541–642 MB, most of it that garbage (bench/results/scale-obniz-peak.md).
 */
const COLLECT_EVERY = 200_000;

/** How assignDevices answered, counted (not kept: a million results at the first sync). */
export class AssignTally {
  added = 0;
  noSlave = 0;
  already = 0;
  readonly count = (_: number, ok: boolean, detail: string): void => {
    if (ok) this.added++;
    else if (detail === 'NO_ACCEPTABLE_WORKER') this.noSlave++;
    else if (detail === 'ALREADY_INSTALLED') this.already++;
  };
}

/** How long one read of the slaves serves the chunks after it (a slave's heartbeat is every 10 s by default). */
export const STATES_FRESH_MS = 5000;

/**
 * Every slave's heartbeat and list length, read again at most every STATES_FRESH_MS over a sync's
 * chunks, with the devices its chunks placed since counted in: at 5,000 slaves a read is 10,000
 * commands, and one a chunk made the first sync's reads grow as devices × slaves. A slave that died
 * meanwhile refuses its devices (NOT_ALIVE) and assignEach plans them again from a fresh read.
 */
export class SlavesAcrossChunks {
  private states?: SlaveState[];
  private readAt = 0;
  private readonly placed = new Map<string, number>();

  readonly read = async (ctx: Ctx): Promise<SlaveState[]> => {
    if (!this.states || ctx.clock.now() - this.readAt > STATES_FRESH_MS) {
      this.states = await slaveStates(ctx);
      this.readAt = ctx.clock.now();
      this.placed.clear();
    }
    return this.states.map((s) => ({ ...s, devices: s.devices + (this.placed.get(s.name) ?? 0) }));
  };

  placedOn(slave: string): void {
    this.placed.set(slave, (this.placed.get(slave) ?? 0) + 1);
  }
}

export class AddStream {
  readonly tally = new AssignTally();
  /** The list the reader hands over, once it has: the one to diff without its adds. */
  list?: DeviceList;
  /** Adds (read.adds) sent so far. */
  private sent = 0;
  /** Devices read at the last full collection. */
  private collected = 0;
  private sending: Promise<void> = Promise.resolve();
  private failed?: { error: unknown };
  private readonly slaves = new SlavesAcrossChunks();
  /** The tally, and the slave each device went to counted for the next chunk's plan. */
  private readonly placed = (i: number, ok: boolean, detail: string): void => {
    if (ok) this.slaves.placedOn(detail);
    this.tally.count(i, ok, detail);
  };

  constructor(
    private readonly ctx: Ctx,
    private readonly read: ReadDiff,
    private readonly formerSlaves: (ids: readonly string[]) => ReadonlyMap<string, string>,
  ) {}

  /** After each slice read: a chunk of its new devices sent once there is one (one chunk in flight). */
  readonly slice = async (list: DeviceList): Promise<void> => {
    this.list = list;
    // the read's garbage collected as it goes (texts sent, slices, parsed items, replies), not let pile up to a peak
    if (list.ids.length - this.collected >= COLLECT_EVERY) (collectGarbage(), (this.collected = list.ids.length));
    if (this.read.adds.length - this.sent >= CHUNK) await this.send();
  };

  /** The rest sent, and every chunk's end awaited; throws what a chunk's sending threw. */
  async end(): Promise<void> {
    if (this.list && this.read.adds.length > this.sent) await this.send();
    await this.sending;
    if (this.failed) throw this.failed.error;
  }

  /** The list turned out bad: the chunk in flight ends, nothing more is sent. */
  async abandon(): Promise<void> {
    await this.sending;
  }

  private async send(): Promise<void> {
    await this.sending;
    if (this.failed) throw this.failed.error;
    const list = this.list!;
    const at = this.read.adds.slice(this.sent);
    this.sent = this.read.adds.length;
    const chunk = pick(list, at);
    // the chunk holds the texts until sent; the list keeps the ids and fingerprints
    for (const i of at) list.texts[i] = '';
    this.sending = assignEach(this.ctx, chunk, this.placed, { prefer: this.formerSlaves(chunk.ids), unique: true, states: this.slaves.read }).catch((error: unknown) => {
      this.failed = { error };
    });
  }
}
