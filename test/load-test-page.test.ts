// The orchestrator's page in real headless Chromium: it wants the token, then
// starts a test, shows live charts of requests per second, latency and users,
// the per-metric table, errors, and the worker with CPU and memory; it
// changes the users and stops the test.
import t from 'tap';
import { resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { root } from './support/cli.ts';
import { startLoad, startTarget } from './support/load.ts';

const target = await startTarget();
const load = await startLoad({ options: { api: true, port: 0, token: 'page-token', metricsInterval: 0.5 } });
const url = load.logs.find((l) => l.msg === 'load test API and page')!.fields.url as string;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
t.teardown(async () => {
  await browser.close();
  await load.handle.stop('test over');
  await target.close();
});

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

t.test('start, watch, change users, stop — from the page', async (t) => {
  const page = await browser.newPage();
  t.teardown(() => page.close());
  await page.goto(`${url}?token=page-token`);
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor();
  await page.fill('input[name=scenario]', resolve(root, 'test/fixtures/load-test/paced.mjs'));
  await page.fill('#start input[name=users]', '6');
  await page.fill('input[name=spawnRate]', '100');
  await page.fill('input[name=params]', JSON.stringify({ baseUrl: target.url }));
  await page.getByTestId('start').click();
  await page.getByTestId('state').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 10_000 });
  await page.getByTestId('users').filter({ hasText: /^6$/ }).waitFor({ timeout: 10_000 });
  t.pass('RUNNING with 6 users');

  // Live charts: each series has a line that grows as seconds pass.
  await page.waitForFunction(() => Number(document.querySelector('#chart-rps polyline')?.getAttribute('data-points') ?? 0) >= 3, undefined, { timeout: 15_000 });
  for (const [chart, series] of [['chart-rps', ['rps']], ['chart-latency', ['p50', 'p95', 'p99']], ['chart-users', ['users']]] as const) {
    const drawn = await page.locator(`#${chart} polyline`).evaluateAll((lines) => lines.map((l) => l.getAttribute('data-series')));
    t.same(drawn, series, `${chart} draws ${series.join(', ')}`);
  }
  const rpsPoints = await page.locator('#chart-rps polyline').getAttribute('points');
  t.ok(rpsPoints!.split(' ').some((p) => Number(p.split(',')[1]) < 95), 'the requests-per-second line rises above zero');

  const metricRow = page.getByTestId('metrics').locator('tbody tr', { hasText: 'GET /ping' });
  await metricRow.waitFor();
  const cells = await metricRow.locator('td').allTextContents();
  t.ok(Number(cells[1]) > 0, `per-metric table: ${cells[1]} requests of GET /ping`);
  const worker = await page.getByTestId('workers').locator('tbody tr').first().locator('td').allTextContents();
  t.equal(worker[2], '6', 'the worker has the 6 users');
  t.ok(Number(worker[4]) >= 0 && Number(worker[5]) > 10, `the worker shows CPU ${worker[4]}% and RSS ${worker[5]} MB`);

  await page.fill('#users input[name=users]', '2');
  await page.getByTestId('set-users').click();
  await page.getByTestId('users').filter({ hasText: /^2$/ }).waitFor({ timeout: 10_000 });
  t.pass('users changed to 2 from the page');

  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  const requests = Number(await page.getByTestId('requests').textContent());
  const served = (await target.stats()).counts['GET /ping'];
  t.equal(requests, served, `the page shows the final count: ${requests} = ${served} served`);
});

t.test('errors are listed by kind', async (t) => {
  const page = await browser.newPage();
  t.teardown(() => page.close());
  await page.goto(`${url}?token=page-token`);
  await page.fill('input[name=scenario]', resolve(root, 'test/fixtures/load-test/paced.mjs'));
  await page.fill('#start input[name=users]', '2');
  await page.fill('input[name=params]', '{"baseUrl": "http://127.0.0.1:9"}');
  await page.getByTestId('start').click();
  const row = page.getByTestId('error-table').locator('tbody tr', { hasText: 'GET /ping' });
  await row.waitFor({ timeout: 15_000 });
  t.match(await row.textContent(), /ECONNREFUSED/, 'a refused connection is an error of its metric');
  await page.getByTestId('stop').click();
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor({ timeout: 15_000 });
  await page.fill('input[name=params]', 'not json');
  await page.getByTestId('start').click();
  await page.getByTestId('message').filter({ hasText: 'params is not JSON' }).waitFor();
  t.pass('bad params are refused on the page');
});
