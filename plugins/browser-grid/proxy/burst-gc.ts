// After a burst of connections, the proxy collects the garbage it left and
// gives its grown heap back (collectAfterBursts says why and when).
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Connections accepted within one tick from which they count as a burst. */
const BURST = 256;
const TICK_MS = 1000;
/** How long after a burst the collections go on: past the 5 s over which V8 weighs the allocation rate, and past the documented 10 s. */
const SETTLE_MS = 12_000;
let fullGc: (() => void) | undefined;

/**
 * Memory back after a burst of connections: thousands of short connections leave tens of MB
 * of garbage in V8's old space and grow its young generation to its most (32 MB here), and
 * V8 gives that young generation back only to a full collection that finds the allocation
 * rate low over its last 5 s: a proxy that goes quiet afterwards would keep it all, and one
 * that collects only on its heartbeats (every 5 s by default) did so too late. So the
 * connections are counted per second (a timer that runs only while connections come);
 * once a burst (BURST or more in a second) is over, a full collection runs every second
 * for SETTLE_MS, through V8's own gc() (as Jest's leak detector reaches it). Not until
 * the heap is back to its size just before the burst: the real clients served then may
 * have grown it, and it would stop there. `collected` is told each burst's size.
 */
export function collectAfterBursts(server: Server, collected: (connections: number) => void = () => {}): { stop(): void } {
  let accepted = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let burst = 0;
  let burstOver = 0;
  const stop = () => {
    clearInterval(timer);
    timer = undefined;
  };
  const tick = () => {
    const since = accepted;
    accepted = 0;
    if (since >= BURST) {
      burst += since;
      burstOver = 0; // still coming
      return;
    }
    if (!burst) {
      if (!since) stop(); // quiet: no timer until the next connection
      return;
    }
    burstOver ||= Date.now();
    collect();
    if (Date.now() - burstOver >= SETTLE_MS) {
      collected(burst);
      burst = 0;
    }
  };
  server.on('connection', () => {
    accepted++;
    timer ??= setInterval(tick, TICK_MS).unref();
  });
  return { stop };
}

function collect(): void {
  if (!fullGc) {
    try {
      setFlagsFromString('--expose-gc');
      fullGc = runInNewContext('gc') as () => void;
      setFlagsFromString('--no-expose-gc');
    } catch {
      fullGc = () => {}; // a runtime without V8's flags (Deno): memory comes back at V8's own pace
    }
  }
  fullGc();
}
