// The API routes behind the page's summary (server.ts hands them what it does
// not route itself):
//   GET /api/thresholds?threshold=p95<200ms&threshold=errors<1%
//         the running or last test's outcome of each threshold, as JSON
//   GET /api/report[?threshold=…]
//         that test's HTML report (report/formats.ts) with its probes, as a download
//   GET /api/stats.csv, /api/failures.csv, /api/exceptions.csv
//         its statistics, request failures and step exceptions (as Locust's), as downloads
//   GET /api/result.json[?threshold=…]
//         all of it: result, thresholds' outcomes and probes, as a download
// Thresholds are the `coord load run --threshold` syntax; a bad one is a 400.
import type { ServerResponse } from 'node:http';
import type { ProbeSeries } from '../scenario/probes.ts';
import { failuresCsv, formatActual, resultCsv, resultHtml, resultJson } from '../report/formats.ts';
import type { TestController } from '../run-lifecycle/controller.ts';
import type {  } from '../run-lifecycle/controller.ts';
import { evaluateThresholds, parseThreshold } from '../metrics/thresholds.ts';
import { ConflictError } from '../errors.ts';

export const reportRouteNames = ['GET /api/thresholds', 'GET /api/report', 'GET /api/stats.csv', 'GET /api/failures.csv', 'GET /api/exceptions.csv', 'GET /api/result.json'];

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
  // a text file ends with a newline (the formats give lines without the last one, as the CLI prints them)
  const download = (type: string, name: string, body: string) =>
    res.writeHead(200, { 'content-type': type, 'content-disposition': `attachment; filename="load-test-epoch-${result.epoch}-${name}"`, 'cache-control': 'no-store' }).end(`${body}\n`);
  if (route === 'GET /api/stats.csv') download('text/csv; charset=utf-8', 'stats.csv', resultCsv(result));
  else if (route === 'GET /api/failures.csv') download('text/csv; charset=utf-8', 'failures.csv', failuresCsv(result, 'failures'));
  else if (route === 'GET /api/exceptions.csv') download('text/csv; charset=utf-8', 'exceptions.csv', failuresCsv(result, 'exceptions'));
  else if (route === 'GET /api/result.json') download('application/json', 'result.json', resultJson(result, outcomes, (await probes?.(result.epoch)) ?? []));
  else if (route === 'GET /api/report') {
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
