// A test whose users ran nothing — no request, no measurement, no failure —
// passes every latency threshold with zeros (p95 0 ms). That is what a lost
// coordination state or a scenario that never reaches its target looks like,
// so it fails the run unless the scenario says it may (allowNoRequests: true,
// for a scenario that only prepares data, say).
import type { TestResult } from './results.ts';
import type { CheckedScenario } from '../scenario/scenario.ts';
import type { ThresholdOutcome } from './thresholds.ts';

/** What a scenario may add to say that a test without requests is fine. */
export interface TrafficOptions {
  /** A test whose users ran no request and recorded nothing passes (default false: it fails, exit 99). */
  allowNoRequests?: boolean;
}

/** The threshold text a test without traffic fails, as the summary prints it. */
export const NO_REQUESTS = 'requests>0';

/** True when the test's users ran no request and recorded nothing at all. */
export function ranNothing(result: TestResult): boolean {
  // requests the workers recorded but no batch read holds (a terminated thread's) were run: that is a gap, named as one
  if ((result.incomplete?.unaccounted ?? 0) > 0) return false;
  return result.total.count === 0 && result.metrics.every((m) => m.count === 0 && m.errors === 0);
}

export function allowsNoRequests(scenario: CheckedScenario): boolean {
  return (scenario.source as TrafficOptions).allowNoRequests === true;
}

/**
 * The outcome to add to the thresholds' (a failed `requests>0`), or undefined
 * when the test ran something or its scenario allows running nothing.
 */
export function noRequestsOutcome(result: TestResult, scenario: CheckedScenario): ThresholdOutcome | undefined {
  if (!ranNothing(result) || allowsNoRequests(scenario)) return undefined;
  return { threshold: NO_REQUESTS, actual: 0, ok: false };
}

