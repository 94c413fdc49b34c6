// The API routes behind the page's summary (api.ts hands them what it does
// not route itself):
//   GET /api/thresholds?threshold=p95<200ms&threshold=errors<1%
//         the running or last test's outcome of each threshold, as JSON
//   GET /api/report[?threshold=…]
//         that test's HTML report (report.ts) with its probes, as a download
// Thresholds are the `coord load run --threshold` syntax; a bad one is a 400.
import type { ServerResponse } from 'node:http';
import type { ProbeSeries } from './probes.ts';
import { formatActual, resultHtml } from './report.ts';
import type { TestController } from './test-lifecycle.ts';
import { ConflictError } from './test-lifecycle.ts';
import { evaluateThresholds, parseThreshold } from './thresholds.ts';

export const reportRouteNames = ['GET /api/thresholds', 'GET /api/report'];

/** Answers the route if it is one of these; false when it is not. */
export async function reportRoutes(
  route: string,
  url: URL,
  res: ServerResponse,
  controller: TestController,
  probes?: (epoch: number) => Promise<ProbeSeries[]>,
): Promise<boolean> {
  if (!reportRouteNames.includes(route)) return false;
  const thresholds = url.searchParams.getAll('threshold').flatMap((t) => t.split(',')).filter((t) => t.trim()).map(parseThreshold);
  const result = (await controller.status()).result;
  if (!result) throw new ConflictError('no test has run yet: start one first');
  const outcomes = evaluateThresholds(thresholds, result);
  if (route === 'GET /api/report') {
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-disposition': `attachment; filename="load-test-epoch-${result.epoch}.html"`,
        'cache-control': 'no-store',
      })
      .end(resultHtml(result, outcomes, (await probes?.(result.epoch)) ?? []));
  } else {
    const body = { epoch: result.epoch, thresholds: outcomes.map((o) => ({ ...o, actual: Number.isFinite(o.actual) ? o.actual : null, shown: formatActual(o) })) };
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  }
  return true;
}
