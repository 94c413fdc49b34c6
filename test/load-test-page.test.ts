// The orchestrator's page in real headless Chromium: it wants the token, then
// starts a test, shows live uPlot charts (time axis, units, values under the
// cursor) of requests and failures per second, latency and users, the error
// % in the headline, the per-metric table, errors, and the worker with CPU
// and memory; it changes the users and stops the test, after which the
// summary, the thresholds and the report download stay. The failures chart
// rises when the target stops answering. Against Locust's page: while a test
// runs the form shows its settings; the headline and the summary agree (one
// status draws both); the Failures tab shows each kind's first and last text;
// the per-metric table has min, mean, max and current req/s; "Reset stats"
// zeroes the tables and charts; the statistics, failures and exceptions CSVs
// and the JSON download and parse. Screenshots go to test/.probe/.
import t from 'tap';
import { mkdirSync, readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { join, resolve } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { launchOptions } from './support/chromium.ts';
import { root } from './support/cli.ts';
import { openSavedReport, startLoad, startTarget } from './support/load.ts';
import { until } from './support/until.ts';

const shots = join(root, 'test/.probe');
mkdirSync(shots, { recursive: true });
const target = await startTarget();
const load = await startLoad({ options: { api: true, port: 0, token: 'page-token', metricsInterval: 0.5 } });
const url = load.logs.find((l) => l.msg === 'load test API and page')!.fields.url as string;
const browser = await chromium.launch(launchOptions);
t.teardown(async () => {
  await browser.close();
  await load.handle.stop('test over');
  await target.close();
});

async function openPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  await page.goto(`${url}?token=page-token`);
  await page.getByTestId('state').filter({ hasText: /IDLE|RUNNING/ }).waitFor();
  return page;
}

async function startFromPage(page: Page, users: number, baseUrl: string, scenario = 'paced.mjs'): Promise<void> {
  await page.fill('input[name=scenario]', resolve(root, 'test/fixtures/load-test', scenario));
  await page.fill('#start input[name=users]', String(users));
  await page.fill('input[name=spawnRate]', '100');
  await page.fill('input[name=params]', JSON.stringify({ baseUrl }));
  await page.getByTestId('start').click();
  await page.getByTestId('state').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 10_000 });
}

/** The values a chart draws for one of its series (uPlot's data, index 1 = the first series). */
function chartValues(page: Page, chart: string, series = 1): Promise<(number | null)[]> {
  return page.evaluate(([c, i]) => (document.querySelector('#charts') as unknown as { charts: Record<string, { data: (number | null)[][] }> }).charts[c]!.data[i]!, [chart, series] as const);
}

t.test('without the token the page is refused', async (t) => {
  const res = await fetch(url);
  t.equal(res.status, 401, 'the page itself wants the token');
  const api = await fetch(`${url}api/status?token=wrong`);
  t.equal(api.status, 401, 'and so does the API');
  const page = await browser.newPage();
  await page.goto(url);
  t.equal(await page.textContent('body'), JSON.stringify({ error: 'missing or wrong token: send Authorization: Bearer TOKEN or ?token=TOKEN' }), 'the browser sees why');
  await page.close();
});

t.test('the page needs nothing but the orchestrator: uPlot is inlined', async (t) => {
  const page = await browser.newPage();
  t.teardown(() => page.close());
  const outside: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(url)) outside.push(r.url());
  });
  await page.goto(`${url}?token=page-token`);
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor();
  t.equal(await page.evaluate(() => typeof (globalThis as { uPlot?: unknown }).uPlot), 'function', 'uPlot is there');
  t.same(outside, [], 'no request leaves the orchestrator');
});

t.test('start, watch, hover, change users, stop — the summary, thresholds and report stay', async (t) => {
  const page = await openPage();
  t.teardown(() => page.close());
  await page.fill('#thresholds input', 'p95<5000ms, errors<1%, p50<0.001ms');
  await page.getByTestId('set-thresholds').click();
  await startFromPage(page, 6, target.url);
  await page.getByTestId('users').filter({ hasText: /^6$/ }).waitFor({ timeout: 10_000 });
  t.pass('RUNNING with 6 users');

  // Live charts: uPlot charts with a time axis, units and gridlines, growing as seconds pass.
  await page.waitForFunction(() => ((document.querySelector('#charts') as unknown as { charts?: Record<string, { data: number[][] }> }).charts?.rps?.data[0]?.length ?? 0) >= 3, undefined, { timeout: 15_000 });
  for (const [chart, unit, series] of [['rps', 'req/s', ['requests']], ['errors', 'failures/s', ['failures']], ['latency', 'ms', ['p50', 'p95', 'p99']], ['users', 'users', ['users']]] as const) {
    const el = page.getByTestId(`chart-${chart}`);
    t.match(await el.locator('.u-title').textContent(), unit, `${chart}: the title names the unit ${unit}`);
    t.equal(await el.locator('.u-axis').count(), 2, `${chart}: a time axis and a value axis`);
    const labels = await el.locator('.u-legend .u-series .u-label').allTextContents();
    t.same(labels, ['time', ...series], `${chart}: the legend names ${series.join(', ')}`);
  }
  const xs = await chartValues(page, 'rps', 0);
  t.ok(Math.abs(xs.at(-1)! * 1000 - Date.now()) < 60_000, 'the x axis is wall-clock time');
  t.ok((await chartValues(page, 'rps')).some((v) => v! > 0), 'the requests-per-second series rises above zero');

  // Hover: the legend shows the values under the cursor.
  const rpsChart = page.getByTestId('chart-rps');
  const box = (await rpsChart.locator('.u-over').boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  const value = rpsChart.locator('.u-legend .u-series').nth(1).locator('.u-value');
  await page.waitForFunction((el) => /^\d+(\.\d+)? req\/s$/.test(el!.textContent ?? ''), await value.elementHandle(), { timeout: 5_000 });
  t.match(await value.textContent(), /^\d+(\.\d+)? req\/s$/, `hovering shows the value: ${await value.textContent()}`);
  t.match(await rpsChart.locator('.u-legend .u-series').nth(0).locator('.u-value').textContent(), /\d+:\d\d:\d\d/, 'and its time');
  await page.screenshot({ path: join(shots, 'load-page-running.png'), fullPage: true });

  const metricRow = page.getByTestId('metrics').locator('tbody tr', { hasText: 'GET /ping' });
  await metricRow.waitFor();
  const cells = await metricRow.locator('td').allTextContents();
  t.ok(Number(cells[1]) > 0, `per-metric table: ${cells[1]} requests of GET /ping`);
  const worker = await page.getByTestId('workers').locator('tbody tr').first().locator('td').allTextContents();
  t.equal(worker[2], '6', 'the worker has the 6 users');
  t.ok(Number(worker[4]) >= 0 && Number(worker[5]) > 10, `the worker shows CPU ${worker[4]}% and RSS ${worker[5]} MB`);
  t.equal(await page.getByTestId('error-rate').textContent(), '0.00%', 'the headline shows the error %');

  await page.fill('#users input[name=users]', '2');
  await page.getByTestId('set-users').click();
  await page.getByTestId('users').filter({ hasText: /^2$/ }).waitFor({ timeout: 10_000 });
  t.pass('users changed to 2 from the page');

  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  const requests = Number(await page.getByTestId('requests').textContent());
  const served = (await target.stats()).counts['GET /ping'];
  t.equal(requests, served, `the page shows the final count: ${requests} = ${served} served`);

  // After Stop: the summary, thresholds and the report stay, across refreshes.
  await page.waitForTimeout(2_500);
  await page.getByTestId('summary-text').filter({ hasText: `${served} requests` }).waitFor({ timeout: 5_000 });
  t.match(await page.locator('#summary-title').textContent(), /^last test/, 'the summary is of the last test');
  const outcomes = await page.getByTestId('threshold-table').locator('tbody tr').evaluateAll((rows) => rows.map((r) => [r.className, ...[...r.querySelectorAll('td')].map((c) => c.textContent)]));
  t.same(outcomes.map((o) => [o[0], o[1], o[3]]), [['ok', 'p95<5000ms', 'ok'], ['ok', 'errors<1%', 'ok'], ['fail', 'p50<0.001ms', 'FAIL']], 'the thresholds stay, the failed one marked');
  t.match(await page.getByTestId('verdict').textContent(), /^FAILED: p50<0.001ms$/, 'the verdict names the failed threshold');
  t.ok((await chartValues(page, 'rps')).length >= 3, 'the charts stay');
  await page.screenshot({ path: join(shots, 'load-page-stopped.png'), fullPage: true });

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('report').click()]);
  t.match(download.suggestedFilename(), /^load-test-epoch-\d+\.html$/, `the report downloads as ${download.suggestedFilename()}`);
  const file = join(shots, 'load-page-report.html');
  await download.saveAs(file);
  const html = readFileSync(file, 'utf8');
  t.match(html, `${served} requests`, 'the report has the test’s numbers');

  // The downloaded report, opened offline: the same charts with legends, the failed threshold marked.
  const { page: report, outside } = await openSavedReport(t, browser, file);
  await report.getByTestId('chart-latency').locator('canvas').waitFor();
  t.same(await report.getByTestId('chart-latency').locator('.u-legend .u-label').allTextContents(), ['time', 'p50', 'p95', 'p99'], 'the report’s latency chart has its legend');
  t.equal(await report.locator('[data-chart]').count(), 4, 'the report has the four charts');
  t.match(await report.locator('tr.fail').textContent(), /p50<0\.001ms.*FAIL/, 'the failed threshold is marked');
  t.match(await report.getByTestId('verdict').textContent(), /FAILED: 1 of 3 thresholds/, 'and the verdict says so');
  t.same(outside, [], 'the report needs no network');
  await report.screenshot({ path: join(shots, 'load-report.png'), fullPage: true });
});

t.test('the failures chart rises when the target stops answering', async (t) => {
  const failing = await startTarget();
  const page = await openPage();
  t.teardown(() => page.close());
  await page.fill('#thresholds input', 'errors<1%');
  await page.getByTestId('set-thresholds').click();
  await startFromPage(page, 4, failing.url);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=requests]')!.textContent) > 20, undefined, { timeout: 15_000 });
  t.same((await chartValues(page, 'errors')).filter((v) => v! > 0), [], 'no failures while the target answers');
  await failing.close();
  await page.waitForFunction(
    () => ((document.querySelector('#charts') as unknown as { charts: Record<string, { data: number[][] }> }).charts.errors!.data[1] ?? []).some((v) => v >= 5),
    undefined,
    { timeout: 15_000 },
  );
  const failures = (await chartValues(page, 'errors')) as number[];
  t.ok(Math.max(...failures) >= 5, `the failures chart rises: up to ${Math.max(...failures)} failures/s`);
  t.not(await page.getByTestId('error-rate').textContent(), '0.00%', `the headline shows ${await page.getByTestId('error-rate').textContent()} errors`);
  await page.waitForTimeout(1_500);
  await page.screenshot({ path: join(shots, 'load-page-failing.png'), fullPage: true });
  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  await page.getByTestId('threshold-table').locator('tr.fail', { hasText: 'errors<1%' }).waitFor({ timeout: 5_000 });
  t.pass('after Stop, errors<1% stays marked FAIL');
});

t.test('errors are listed by kind; bad params and thresholds are refused', async (t) => {
  const page = await openPage();
  t.teardown(() => page.close());
  await startFromPage(page, 2, 'http://127.0.0.1:9');
  const row = page.getByTestId('error-table').locator('tbody tr', { hasText: 'GET /ping' });
  await row.waitFor({ timeout: 15_000 });
  t.match(await row.textContent(), /ECONNREFUSED/, 'a refused connection is an error of its metric');
  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  await page.fill('input[name=params]', 'not json');
  await page.getByTestId('start').click();
  await page.getByTestId('message').filter({ hasText: 'params is not JSON' }).waitFor();
  t.pass('bad params are refused on the page');
  await page.fill('#thresholds input', 'p95 under 2s');
  await page.getByTestId('set-thresholds').click();
  await page.getByTestId('message').filter({ hasText: '"p95 under 2s" does not parse' }).waitFor({ timeout: 5_000 });
  t.pass('a bad threshold is one clear line on the page');
  const res = await fetch(`${url}api/thresholds?token=page-token&threshold=${encodeURIComponent('p95 under 2s')}`);
  t.equal(res.status, 400, 'the API refuses it with 400');
});

t.test('resources: seen and added to from the page while a test runs', async (t) => {
  const page = await openPage();
  t.teardown(() => page.close());
  await page.fill('#resources input[name=name]', 'tokens');
  await page.fill('#resources input[name=count]', '200');
  await page.getByTestId('add-resources').click();
  await page.getByTestId('message').filter({ hasText: 'add them while a test runs' }).waitFor({ timeout: 5_000 });
  t.pass('adding between tests is refused with the reason');

  await startFromPage(page, 5, target.url, 'resources.mjs');
  const row = page.getByTestId('resources').locator('tbody tr', { hasText: 'tokens' });
  await row.waitFor({ timeout: 10_000 });
  let cells = await row.locator('td').allTextContents();
  t.same([cells[0], cells[1], cells[5], cells[6]], ['tokens', '1000', '{"token":"t1"}', '{"token":"t1000"}'], 'the scenario’s 1000 tokens, with their payloads');

  await page.fill('#resources input[name=data]', '{"token": "extra"}');
  await page.getByTestId('add-resources').click();
  await row.locator('td').nth(1).filter({ hasText: /^1200$/ }).waitFor({ timeout: 5_000 });
  cells = await row.locator('td').allTextContents();
  t.equal(cells[2], '1200', 'all 1200 are in the pool');
  t.equal(cells[6], '{"token":"extra"}', 'the last one has the payload given on the page');
  t.ok(Number(cells[3]) + Number(cells[4]) === 1200 && Number(cells[4]) <= 50, `free ${cells[3]} + held ${cells[4]} = 1200 (5 users hold up to 10 each)`);
  await until('a user holds an added token', async () => (await target.stats()).held.some((id) => Number(id) > 1000), 15_000);
  t.pass('the users take the added tokens');
  await page.screenshot({ path: join(shots, 'load-page-resources.png'), fullPage: true });
  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  t.same((await target.stats()).doubleHolds, [], 'no token was held twice at once');
  await page.fill('#resources input[name=data]', '{oops');
  await page.getByTestId('add-resources').click();
  await page.getByTestId('message').filter({ hasText: 'payload is not JSON' }).waitFor({ timeout: 5_000 });
  t.pass('a bad payload is refused on the page');
});

/** The headline's and the summary's numbers, read in one go (the same drawn state). */
function headlineAndSummary(page: Page) {
  return page.evaluate(() => {
    const text = (id: string) => document.querySelector(`[data-testid=${id}]`)!.textContent!;
    return {
      requests: text('requests'), errors: text('errors'), errorRate: text('error-rate'), rps: text('rps'), p95: text('p95'), aborted: text('aborted'),
      summary: text('summary-text'),
    };
  });
}

async function downloaded(page: Page, testId: string): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  const file = join(shots, `download-${download.suggestedFilename()}`);
  await download.saveAs(file);
  return { name: download.suggestedFilename(), text: readFileSync(file, 'utf8') };
}

t.test('against Locust: running settings, headline = summary, failures with their text, reset, downloads', async (t) => {
  const page = await openPage();
  t.teardown(() => page.close());
  await page.fill('#thresholds input', '');
  await page.getByTestId('set-thresholds').click();
  const scenario = resolve(root, 'test/fixtures/load-test/failing.mjs');
  await page.fill('input[name=scenario]', scenario);
  await page.fill('#start input[name=users]', '3');
  await page.fill('input[name=spawnRate]', '100');
  await page.fill('input[name=duration]', '5m');
  await page.fill('input[name=params]', JSON.stringify({ baseUrl: target.url }));
  await page.getByTestId('start').click();
  await page.getByTestId('state').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 10_000 });

  // Another page opened while it runs shows the running test's settings, not the defaults.
  const other = await openPage();
  t.teardown(() => other.close());
  await other.getByTestId('form-note').filter({ hasText: 'the running test’s settings' }).waitFor({ timeout: 10_000 });
  const form = await other.evaluate(() => Object.fromEntries([...document.querySelectorAll('#start input')].map((i) => [(i as HTMLInputElement).name, [(i as HTMLInputElement).value, (i as HTMLInputElement).readOnly]])));
  t.same(form, { scenario: [scenario, true], users: ['3', true], spawnRate: ['100', true], duration: ['300s', true], rate: ['', true], params: [JSON.stringify({ baseUrl: target.url }), true] }, 'the form shows the running test’s settings, read-only');
  t.equal(await other.getByTestId('start').isDisabled(), true, 'and Start waits for the test to end');

  // The headline and the summary, drawn from one status, agree at every refresh.
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=requests]')!.textContent) >= 20, undefined, { timeout: 20_000 });
  for (let i = 0; i < 4; i++) {
    const h = await headlineAndSummary(page);
    t.match(h.summary, `${h.requests} requests · ${h.errors} errors (${h.errorRate}) · ${h.rps} req/s · p50 `, `refresh ${i + 1}: the summary says what the headline says (${h.requests} requests, ${h.rps} req/s)`);
    t.match(h.summary, `p95 ${h.p95} ms`);
    await page.waitForTimeout(700);
  }

  // The per-metric table: Locust's columns.
  t.same(await page.getByTestId('metrics').locator('th').allTextContents(), ['metric', 'requests', 'errors', 'aborted', 'req/s avg', 'req/s now', 'mean', 'min', 'p50', 'p90', 'p95', 'p99', 'max']);
  const ping = await page.getByTestId('metrics').locator('tbody tr', { hasText: 'GET /ping' }).locator('td').allTextContents();
  const [mean, min, max] = [Number(ping[6]), Number(ping[7]), Number(ping[12])];
  t.ok(min > 0 && min <= mean && mean <= max, `min ${min} ≤ mean ${mean} ≤ max ${max} ms`);
  t.ok(Number(ping[5]) > 0 && Number(ping[5]) <= 3 * 5 * 2, `req/s now: ${ping[5]} (3 users at 5/s)`);

  // The Failures tab: each kind with the full text of its first and last.
  await page.getByTestId('tab-failures').click();
  const httpRow = page.getByTestId('failures').locator('tr', { hasText: 'GET /ping' });
  await httpRow.waitFor({ timeout: 10_000 });
  t.equal(await httpRow.locator('td').nth(1).textContent(), 'HTTP 200', 'a request that failed: its kind');
  t.equal(await httpRow.getByTestId('failure-first').textContent(), 'HTTP 200\n{"ok":true}', 'and its text: the status and the body it came with');
  const stepRow = page.getByTestId('failures').locator('tr', { hasText: 'step:ping' });
  await stepRow.getByTestId('failure-last').waitFor({ timeout: 10_000 });
  t.equal(await stepRow.locator('td').nth(1).textContent(), 'the answer was not 201', 'an exception: its first line is its kind');
  const first = await stepRow.getByTestId('failure-first').textContent();
  const last = await stepRow.getByTestId('failure-last').textContent();
  t.match(first, /^Error: the answer was not 201\niteration \d+\n\s+at .*failing\.mjs/, 'its first occurrence’s whole text, stack included');
  t.match(last, /^Error: the answer was not 201\niteration \d+/, 'and its last');
  t.not(first, last, 'they differ (a sample of each end)');
  t.match(await page.getByTestId('failure-count').textContent(), /^\(\d+\)$/, 'the tab counts the failures');
  await page.screenshot({ path: join(shots, 'load-page-failures.png'), fullPage: true });
  await page.getByTestId('tab-results').click();
  await page.screenshot({ path: join(shots, 'load-page-locust-running.png'), fullPage: true });

  // Reset: no user sends any more, the last batches are in, then the tables and charts are zeroed.
  await page.fill('#users input[name=users]', '0');
  await page.getByTestId('set-users').click();
  await page.getByTestId('users').filter({ hasText: /^0$/ }).waitFor({ timeout: 10_000 });
  await page.waitForTimeout(2_000);
  const before = Number(await page.getByTestId('requests').textContent());
  await page.getByTestId('reset').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=requests]')!.textContent === '0', undefined, { timeout: 5_000 });
  await page.waitForTimeout(1_500); // another refresh or two: still zero
  t.equal(await page.getByTestId('requests').textContent(), '0', `reset: the headline's ${before} requests are 0`);
  t.equal(await page.getByTestId('errors').textContent(), '0', 'its errors too');
  t.equal(await page.getByTestId('metrics').locator('tbody tr').count(), 0, 'the per-metric table is empty');
  t.equal(await page.getByTestId('error-table').locator('tbody tr').count(), 0, 'so is the errors table');
  t.equal(await page.getByTestId('failures').locator('tbody tr').count(), 0, 'and the failures view');
  for (const chart of ['rps', 'errors']) {
    const values = await chartValues(page, chart);
    t.ok(values.length <= 3 && values.every((v) => v === 0), `the ${chart} chart starts again from zero (${values.join(', ')})`);
  }
  // a second with no request has no latency: a gap in the chart, not a fall to 0 ms
  const latencies = await chartValues(page, 'latency');
  t.ok(latencies.length <= 3 && latencies.every((v) => v === null), `the latency chart starts again with gaps (${latencies.join(', ')})`);
  t.match(await page.getByTestId('summary-text').textContent(), ' 0 requests · 0 errors (0.00%)', 'the summary agrees');

  // After the reset the counts start again, and after Stop the downloads hold the test's final numbers.
  await page.fill('#users input[name=users]', '2');
  await page.getByTestId('set-users').click();
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=requests]')!.textContent) >= 6, undefined, { timeout: 15_000 });
  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  await page.waitForTimeout(1_500);
  const final = await headlineAndSummary(page);
  t.match(final.summary, `${final.requests} requests · ${final.errors} errors (${final.errorRate}) · ${final.rps} req/s`, 'after Stop the headline and the summary still agree');
  t.equal(await page.getByTestId('rps-now').textContent(), '0', 'and the headline says 0 req/s now');
  const apart = /errors apart: (\d+) of (\d+) requests failed \((\d+\.\d\d)%\), (\d+) steps threw/.exec(final.summary);
  t.ok(apart, `the summary gives the requests' failures and the steps' apart: ${final.summary}`);
  const requests = Number(final.requests);
  t.ok(requests >= 6 && requests < before, `the requests since the reset only: ${requests} (before it: ${before})`);

  const stats = await downloaded(page, 'download-stats-csv');
  t.match(stats.name, /^load-test-epoch-\d+-stats\.csv$/);
  t.ok(stats.text.endsWith('\n'), 'the statistics CSV ends with a newline');
  const statRows = parse(stats.text, { columns: true }) as Record<string, string>[];
  t.same(Object.keys(statRows[0]!), ['metric', 'requests', 'errors', 'aborted', 'rps', 'mean_ms', 'p50_ms', 'p90_ms', 'p95_ms', 'p99_ms', 'max_ms', 'min_ms', 'current_rps'], 'the statistics CSV parses, with its columns');
  const total = statRows.find((r) => r.metric === 'total')!;
  const pingRow = statRows.find((r) => r.metric === 'GET /ping')!;
  t.equal(Number(pingRow.requests), Number(pingRow.errors), 'every request failed (expected 201)');
  const steps = statRows.find((r) => r.metric === 'step:ping')!;
  t.equal(Number(total.requests), requests, `its total is the page's: ${total.requests} (requests and failed iterations)`);
  t.equal(Number(pingRow.requests) + Number(steps.requests), requests, 'the requests plus the failed iterations');
  t.same(apart?.slice(1, 3).concat(apart[4]!).map(Number), [Number(pingRow.errors), Number(pingRow.requests), Number(steps.errors)], 'the errors apart are the CSV\'s: failed requests of requests, steps that threw');

  const failures = parse((await downloaded(page, 'download-failures-csv')).text, { columns: true }) as Record<string, string>[];
  t.same(failures.map((f) => [f.metric, f.error, Number(f.count)]), [['GET /ping', 'HTTP 200', Number(pingRow.errors)]], 'the failures CSV: the requests’ failures, counted');
  t.equal(failures[0]!.first, 'HTTP 200\n{"ok":true}', 'with their full text');
  t.ok(Date.parse(failures[0]!.first_at) <= Date.parse(failures[0]!.last_at), 'and when they came');
  const exceptions = parse((await downloaded(page, 'download-exceptions-csv')).text, { columns: true }) as Record<string, string>[];
  t.same(exceptions.map((f) => [f.metric, f.error, Number(f.count)]), [['step:ping', 'the answer was not 201', Number(steps.errors)]], 'the exceptions CSV: the steps’ exceptions');
  t.match(exceptions[0]!.last, /^Error: the answer was not 201\niteration \d+\n\s+at /, 'with their stacks');
  const json = JSON.parse((await downloaded(page, 'download-json')).text);
  t.equal(json.total.count, requests, 'the JSON download parses and has the same total');
  t.same(json.failed, { requests: Number(pingRow.errors), ofRequests: Number(pingRow.requests), steps: Number(steps.errors) }, 'and the errors apart');
  t.match(json.workers, [{ id: String, host: String, users: 2, requests: Number(pingRow.requests) }], 'and the worker that took part: its host, its most users, its HTTP requests');
  t.same(json.errors.map((e: { metric: string }) => e.metric).sort(), ['GET /ping', 'step:ping'], 'and every failure with its text');
  t.ok(Array.isArray(json.probes) && Array.isArray(json.thresholds), 'and the probes and thresholds');
  await page.screenshot({ path: join(shots, 'load-page-locust-stopped.png'), fullPage: true });
});
