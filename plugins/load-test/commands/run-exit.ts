// `coord load run`'s last word on a test that ran nothing (traffic.ts): the
// run's exit code as load-run.ts computed it from the thresholds, with that
// rule added. Kept apart from traffic.ts, which the orchestrator imports.
import { writeStderr } from '../../../entries/plugin.ts';
import type { TestController } from '../run-lifecycle/controller.ts';
import { NO_REQUESTS } from '../metrics/traffic.ts';

/**
 * `coord load run`'s exit code with this rule applied: a run that passed its
 * thresholds but whose test ran nothing exits 99, with one line on stderr
 * (stdout may be JSON or CSV). A run that already failed is left as it is.
 */
export function failIfRanNothing(code: number, controller: TestController): number {
  if (code !== 0 || !controller.ranNothing) return code;
  writeStderr(`coord: FAIL ${NO_REQUESTS} (actual 0): the test ran no requests and recorded nothing (set allowNoRequests: true in the scenario if that is expected)\n`);
  return 99;
}
