// Reconnect pacing and the first-connection deadline shared by the Redis
// client adapters: 100 ms, doubling, capped at 5 s, retried forever.

export const FIRST_RETRY_MS = 100;
export const MAX_RETRY_MS = 5_000;

/** How long ready() waits for the first PING before it gives up. */
export const READY_TIMEOUT_MS = 5_000;

/** The delay before reconnect attempt `attempt` (0 for the first retry). */
export function retryDelay(attempt: number): number {
  // The exponent is capped so the arithmetic never overflows on a long outage.
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(Math.max(attempt, 0), 16), MAX_RETRY_MS);
}

/** The longest wait between reconnects behind Sentinel: a promoted replica is found within a second of its promotion. */
export const SENTINEL_MAX_RETRY_MS = 1_000;
