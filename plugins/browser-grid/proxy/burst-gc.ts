// After a burst of connections, the proxy collects the garbage it left at
// once, on its quiet heartbeats (collectAfterBursts says why and when).
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Connections accepted between two heartbeats from which they count as a burst. */
const BURST = 256;
let fullGc: (() => void) | undefined;

/** After a burst, collections run on every quiet heartbeat for this long: its stragglers and the traffic after it settle meanwhile. */
const SETTLE_MS = 10_000;

/**
 * Memory back after a burst of connections: thousands of short connections leave tens of MB
 * of garbage in V8's old space (and a grown young generation), which a proxy that goes
 * quiet afterwards would not collect until its next busy spell. Once a burst (BURST or more
 * connections accepted between two heartbeats) is over, a full collection runs on every
 * heartbeat for SETTLE_MS, through V8's own gc() (as Jest's leak detector reaches it).
 * `settle` is called on each heartbeat; it returns the burst's size when it collected.
 */
export function collectAfterBursts(server: Server): { settle(): number | undefined } {
  let accepted = 0;
  let burst = 0;
  let burstAt = Number.NEGATIVE_INFINITY;
  server.on('connection', () => accepted++);
  return {
    settle() {
      const now = Date.now();
      const since = accepted;
      accepted = 0;
      if (since >= BURST) {
        [burst, burstAt] = [since, now]; // still coming: collected once it is over
        return undefined;
      }
      if (now - burstAt > SETTLE_MS) return undefined;
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
      return burst;
    },
  };
}
