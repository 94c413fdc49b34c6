// A full garbage collection after the manager read or wrote many devices. V8
// collects lazily: it lets the heap grow to several times the live data first
// (measured: a manager of 300,000 devices at 600 MB RSS with 25 MB live), so a
// sync that parsed a big list would keep that memory until the next one. Reading
// the list a slice at a time did not make it unneeded: without it a manager's
// first sync of 1,000,000 devices peaked at 1.1 GB, with it (between phases, and
// every 200,000 devices read) at 452–472 MB (bench/scale.mjs obniz). Where the runtime does not offer it (Deno), nothing happens.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Devices a sync must have handled for a collection to be worth its few tens of ms. */
export const COLLECT_FROM = 20_000;

let gc: (() => void) | undefined | null;

export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
