// Device ids → small non-negative integers (a slot in the manager's index, a
// position in a list): an open-addressing table of (hash, value + 1) pairs in
// one Int32Array, rather than a Map or Set of strings. The ids are not stored:
// `keyOf(value)` names the id a value stands for, read only where the hashes
// match. Looking up an id that is not there then touches one cache line of the
// table, where a Set touches its entry and the entry's key string: at 1,000,000
// ids that was most of the cost of the first sync's check of 1,000,000 new
// devices (a Set: 1.2 CPU-s of the manager's first sync in bench/scale.mjs
// obniz), and the table is no object for the garbage collector to trace.

/** Doubled once the table is half full, so probes stay short. */
const FIRST_CAPACITY = 1024;

export class IdTable {
  private capacity = FIRST_CAPACITY;
  /** At 2k the hash, at 2k + 1 the value + 1 (0: an empty cell). */
  private cells = new Int32Array(2 * FIRST_CAPACITY);
  private count = 0;

  constructor(private readonly keyOf: (value: number) => string) {}

  /** Ids in the table. */
  get size(): number {
    return this.count;
  }

  /** The id's value, or -1. */
  get(id: string): number {
    const k = this.find(id, hashId(id));
    return k < 0 ? -1 : this.cells[2 * k + 1]! - 1;
  }

  /** The id's value set (replaced if the id is there). */
  set(id: string, value: number): void {
    const hash = hashId(id);
    const found = this.find(id, hash);
    if (found >= 0) this.cells[2 * found + 1] = value + 1;
    else this.insert(hash, value);
  }

  /** The id added with its value; false, and nothing changed, if it is there already. */
  add(id: string, value: number): boolean {
    const hash = hashId(id);
    if (this.find(id, hash) >= 0) return false;
    this.insert(hash, value);
    return true;
  }

  /** The id removed; false if it was not there. */
  delete(id: string): boolean {
    let hole = this.find(id, hashId(id));
    if (hole < 0) return false;
    const { cells } = this;
    const mask = this.capacity - 1;
    // backward shift: each later cell of the run moves into the hole unless its home lies between them
    for (let k = (hole + 1) & mask; cells[2 * k + 1] !== 0; k = (k + 1) & mask) {
      const home = cells[2 * k]! & mask;
      const stays = hole <= k ? hole < home && home <= k : hole < home || home <= k;
      if (stays) continue;
      cells[2 * hole] = cells[2 * k]!;
      cells[2 * hole + 1] = cells[2 * k + 1]!;
      hole = k;
    }
    cells[2 * hole] = 0;
    cells[2 * hole + 1] = 0;
    this.count--;
    return true;
  }

  /** The cell holding id, or -1. */
  private find(id: string, hash: number): number {
    const { cells } = this;
    const mask = this.capacity - 1;
    for (let k = hash & mask; ; k = (k + 1) & mask) {
      const stored = cells[2 * k + 1]!;
      if (stored === 0) return -1;
      if (cells[2 * k] === hash && this.keyOf(stored - 1) === id) return k;
    }
  }

  private insert(hash: number, value: number): void {
    if (2 * (this.count + 1) > this.capacity) this.grow();
    this.place(hash, value + 1);
    this.count++;
  }

  private place(hash: number, stored: number): void {
    const mask = this.capacity - 1;
    let k = hash & mask;
    while (this.cells[2 * k + 1] !== 0) k = (k + 1) & mask;
    this.cells[2 * k] = hash;
    this.cells[2 * k + 1] = stored;
  }

  private grow(): void {
    const old = this.cells;
    this.capacity *= 2;
    this.cells = new Int32Array(2 * this.capacity);
    for (let k = 0; k < old.length; k += 2) if (old[k + 1] !== 0) this.place(old[k]!, old[k + 1]!);
  }
}

/** FNV-1a over the id's UTF-16 code units, as a signed 32-bit integer. */
function hashId(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h | 0;
}
