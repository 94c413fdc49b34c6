// Timestamps as WebGrid stores them (RFC 3339), and spans between them.

/** RFC 3339 text of a Unix time in ms, e.g. 2026-01-02T03:04:05.678Z. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** Seconds from an RFC 3339 timestamp to `toMs` (0 when the stamp is missing or unreadable). */
export function secondsSince(stamp: string | null | undefined, toMs: number): number {
  const from = stamp ? Date.parse(stamp) : NaN;
  return Number.isFinite(from) ? Math.max(0, (toMs - from) / 1000) : 0;
}
