// The HTML report of `coord load run --report FILE`, opened offline in real
// headless Chromium: the page's uPlot charts with legends (and the values
// under the cursor), the failures chart showing the seconds after the target
// stopped answering, the failed thresholds marked. Screenshot in test/.probe/.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { buildIfStale } from './support/build.ts';
import { launchOptions } from './support/chromium.ts';
import { coord, root } from './support/cli.ts';
import { openSavedReport, startTarget } from './support/load.ts';
import { until } from './support/until.ts';

buildIfStale();
const shots = join(root, 'test/.probe');
mkdirSync(shots, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'coord-load-report-'));
const browser = await chromium.launch(launchOptions);
t.teardown(async () => {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
});

t.test('coord load run --report: charts with legends, failures, failed thresholds marked', async (t) => {
  const target = await startTarget();
  const file = join(dir, 'report.html');
  const run = coord(['load', 'run', '--scenario', 'test/fixtures/load-test/paced.mjs', '--users', '4', '--spawn-rate', '100', '--duration', '6s',
    '--param', `baseUrl=${target.url}`, '--threshold', 'errors<1%', '--threshold', 'p95<10s', '--report', file]);
  // The target answers for a while, then stops: the second half of the test fails.
  t.teardown(() => run.kill('SIGKILL'));
  // 4 users at 5 requests/s each: 50 requests take 2.5 s, so the first whole second had no failure.
  await until('the target served 50 requests', async () => (await target.stats()).total >= 50, 30_000);
  await target.close();
  t.equal(await run.exited, 99, `exit 99: errors<1% failed (stderr: ${run.stderr().slice(-200)})`);

  const html = readFileSync(file, 'utf8');
  t.notMatch(html, /<script[^>]+src=|<link[^>]+href=/, 'no external script or stylesheet: uPlot is inlined');
  const { page, outside } = await openSavedReport(t, browser, file);
  await page.getByTestId('chart-errors').locator('canvas').waitFor();
  const legends = await page.locator('[data-chart]').evaluateAll((charts) => charts.map((c) => [...c.querySelectorAll('.u-legend .u-label')].map((l) => l.textContent)));
  t.same(legends, [['time', 'requests'], ['time', 'failures'], ['time', 'p50', 'p95', 'p99'], ['time', 'users']], 'four charts, each with its legend');
  const failures = await page.evaluate(() => (document.getElementById('charts') as unknown as { charts: Record<string, { data: number[][] }> }).charts.errors!.data[1]!);
  t.ok(Math.max(...failures) > 0, `the failures chart rises after the target stopped: ${failures.join(', ')}`);
  t.equal(failures[0], 0, 'and starts at 0, while it answered');

  // The cursor on the second with the most failures (a last second after the users stopped may have no request,
  // and so no latency).
  const worst = failures.indexOf(Math.max(...failures));
  const box = (await page.getByTestId('chart-errors').locator('.u-over').boundingBox())!;
  const x = await page.evaluate((i) => {
    const chart = (document.getElementById('charts') as unknown as { charts: Record<string, { data: number[][]; valToPos(v: number, scale: string): number }> }).charts.errors!;
    return chart.valToPos(chart.data[0]![i]!, 'x');
  }, worst);
  await page.mouse.move(box.x + x, box.y + box.height / 2);
  const value = page.getByTestId('chart-errors').locator('.u-legend .u-series').nth(1).locator('.u-value');
  t.equal(await value.textContent(), `${failures[worst]} failures/s`, `hovering shows the value: ${await value.textContent()}`);
  const legendValue = (chart: string, series: number) => page.getByTestId(`chart-${chart}`).locator('.u-legend .u-series').nth(series).locator('.u-value').textContent();
  t.equal(await legendValue('latency', 0), await legendValue('errors', 0), 'the other charts follow the cursor to the same second');
  t.match(await legendValue('latency', 2), / ms$/, 'with the latency of that second (of the refused requests)');

  t.match(await page.locator('tr.fail').textContent(), /errors<1%.*FAIL/, 'the failed threshold is marked');
  t.equal(await page.locator('tr.ok').count(), 1, 'the other one is not');
  t.match(await page.getByTestId('verdict').textContent(), /FAILED: 1 of 2 thresholds \(errors<1%\)/, 'the verdict says which');
  t.match(await page.textContent('body'), new RegExp(`GET /ping`), 'the metrics table');
  t.same(outside, [], 'the report needs no network');
  await page.screenshot({ path: join(shots, 'load-cli-report.png'), fullPage: true });
});
