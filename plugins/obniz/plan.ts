// Planning an assignment in the manager rather than in a script: obniz-app-sdk's
// rule (each device to the alive slave with the fewest devices) picked from a
// binary heap, O(log slaves) a device, so the scripts that write the plan only
// check it, in O(1) a device (scripts.ts, relocate.ts).

interface Load {
  name: string;
  count: number;
}

/** The least-loaded slave again and again (ties: the first by name), each pick counted. */
export class LeastLoaded {
  private readonly heap: Load[] = [];

  /** `devices`: how many each slave's list holds now. */
  constructor(slaves: readonly { name: string; devices: number }[]) {
    for (const s of slaves) this.push({ name: s.name, count: s.devices });
  }

  get size(): number {
    return this.heap.length;
  }

  /** The slave that takes the next device (its count goes up by one), or undefined when there is none. */
  next(): string | undefined {
    const top = this.heap[0];
    if (!top) return undefined;
    top.count += 1;
    this.down(0);
    return top.name;
  }

  private push(load: Load): void {
    const heap = this.heap;
    heap.push(load);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < heap.length && before(heap[l]!, heap[least]!)) least = l;
      if (r < heap.length && before(heap[r]!, heap[least]!)) least = r;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  }
}

function before(a: Load, b: Load): boolean {
  return a.count !== b.count ? a.count < b.count : a.name < b.name;
}
