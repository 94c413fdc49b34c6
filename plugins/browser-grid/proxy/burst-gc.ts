// After a burst of connections, the proxy collects the garbage it left and
// gives its grown heap back (collectAfterBursts says why and when).
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Connections accepted within one tick from which they count as a burst. */
const BURST = 256;
const TICK_MS = 1000;
/** Longest the collections go on after a burst whose heap does not come back (traffic that goes on needs it). */
const SETTLE_MS = 15_000;
/** The heap counts as back within this much of its size before the burst. */
const BACK = 1.05;
let fullGc: (() => void) | undefined;

/**
 * Memory back after a burst of connections: thousands of short connections leave tens of MB
 * of garbage in V8's old space and grow its young generation to its most (32 MB here), and
 * V8 keeps that young generation until a full collection finds the allocation rate low
 * over its last 5 s: a proxy that goes quiet afterwards would keep it all, and one that
 * collects only on its heartbeats (every 5 s by default) did so too late. So the
 * connections are counted per second (a timer that runs only while connections come);
 * once a burst (BURST or more in a second) is over, a full collection runs every second,
 * through V8's own gc() (as Jest's leak detector reaches it), until the heap is back to
 * its size before the burst, at most SETTLE_MS. `collected` is told each burst's size.
 */
export function collectAfterBursts(server: Server, collected: (connections: number) => void = () => {}): { stop(): void } {
  let accepted = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  /** The heap's size on the last quiet tick. */
  let quietHeap = process.memoryUsage().heapTotal;
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
      quietHeap = process.memoryUsage().heapTotal;
      if (!since) stop(); // quiet: no timer until the next connection
      return;
    }
    burstOver ||= Date.now();
    collect();
    if (process.memoryUsage().heapTotal <= quietHeap * BACK || Date.now() - burstOver >= SETTLE_MS) {
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
