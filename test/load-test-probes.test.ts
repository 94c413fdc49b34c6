// Probes (vikhry's @probe) across real processes on real Redis: two workers
// started with --run-probes and one without, an orchestrator, and the scenario
// test/fixtures/load-test/probed.mjs. After a short test the probe streams
// hold both flagged workers' values at about the configured interval, none
// from the worker without the flag; a probe that throws is logged once per
// worker and counted; GET /api/probes returns the same values, the page's
// Probes tab charts them and the HTML report has them, each chart in its own
// box (no two overlap, on a screenshot's layout), and `--out json` too. Bad probes in a
// scenario are one clear error each.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { keyBuilders } from '../core/contract.ts';
import { contract } from '../plugins/load-test/contract.ts';
import { checkScenario } from '../plugins/load-test/scenario/scenario.ts';
import { buildIfStale } from './support/build.ts';
import { launchOptions } from './support/chromium.ts';
import { coordSync, root } from './support/cli.ts';
import { api, openSavedReport } from './support/load.ts';
import { freePort } from './support/redis.ts';
import { startRig } from './support/rig.ts';
import { until } from './support/until.ts';

t.test('a bad probe is one error naming its field', async (t) => {
  const steps = [{ name: 's', run: () => {} }];
  const error = (probes: unknown) => {
    try {
      checkScenario({ steps, probes }, 'x.mjs');
      return 'no error';
    } catch (err) {
      return (err as Error).message;
    }
  };
  t.match(error({ q: { every: 'soon', run: () => 1 } }), /^scenario x\.mjs: probes\.q\.every "soon" is not a duration/);
  t.match(error({ q: { every: -1, run: () => 1 } }), /^scenario x\.mjs: probes\.q\.every -1 must be more than zero/);
  t.match(error({ q: { every: '1s', run: 42 } }), /^scenario x\.mjs: probes\.q has no run\(ctx\) function/);
  t.match(error([]), /^scenario x\.mjs: probes must be an object/);
  t.same(checkScenario({ steps, probes: { q: { run: () => 1 } } }, 'x.mjs').probes.map((p) => [p.name, p.everyMs]), [['q', 1000]], 'every defaults to 1s');
});

buildIfStale();
const { backend, run } = await startRig(t, 'load-test');
const prefix = '{pr}:';
const keys = keyBuilders(contract, prefix);
const port = await freePort();
const timing = ['heartbeatInterval=0.3', 'metricsInterval=0.5', 'gracefulStop=1'];
const startWorker = async (id: string, args: string[]) => {
  const p = run('worker', { prefix, sets: [...timing, `workerId=${id}`], args });
  await p.waitFor((l) => l.msg === 'worker registered');
  return p;
};

const orchestrator = run('orchestrator', { prefix, sets: [...timing, `port=${port}`] });
const workers = { wA: await startWorker('wA', ['--run-probes']), wB: await startWorker('wB', ['--run-probes']), wC: await startWorker('wC', []) };
await orchestrator.waitFor((l) => l.msg === 'load test API and page');

type Entry = { worker: string; epoch: number; ts: number; values?: Record<string, number>; error?: string };
async function entries(probe: string): Promise<Entry[]> {
  const list = (await backend.send(['XRANGE', keys.probe({ probe }), '-', '+'])) as [string, string[]][];
  return list.map(([, fields]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    return { worker: f.worker!, epoch: Number(f.epoch), ts: Number(f.ts), values: f.values ? JSON.parse(f.values) : undefined, error: f.error };
  });
}

t.test('two workers with --run-probes write their probes; the one without writes none', async (t) => {
  const start = await api(port, 'POST', '/api/start', { scenario: resolve(root, 'test/fixtures/load-test/probed.mjs'), users: 3, spawnRate: 100, duration: '3s' });
  t.equal(start.status, 202, 'started');
  const epoch = start.body.epoch as number;
  await until('the test ends', async () => (await api(port, 'GET', '/api/status')).body.state === 'IDLE' && (await api(port, 'GET', '/api/status')).body.result?.epoch === epoch, 30_000, 200);

  const answer = await entries('answer');
  t.ok(answer.every((e) => e.epoch === epoch), 'entries carry the epoch');
  t.same([...new Set(answer.map((e) => e.worker))].sort(), ['wA', 'wB'], 'values from both flagged workers, none from wC');
  for (const [worker, value] of [['wA', 41], ['wB', 42]] as const) {
    const mine = answer.filter((e) => e.worker === worker);
    t.ok(mine.every((e) => e.values?.value === value), `${worker}'s values are all ${value}`);
    const spanS = mine.at(-1)!.ts - mine[0]!.ts;
    const expected = spanS / 0.2 + 1;
    t.ok(spanS >= 1.5, `${worker} probed for ${spanS.toFixed(2)} s of the 3 s test`);
    t.ok(mine.length >= expected * 0.5 && mine.length <= expected + 2, `${worker}: ${mine.length} values in ${spanS.toFixed(2)} s at every 200ms (about ${expected.toFixed(0)})`);
    const gaps = mine.slice(1).map((e, i) => e.ts - mine[i]!.ts).sort((a, b) => a - b);
    const median = gaps[Math.floor(gaps.length / 2)]!;
    t.ok(median >= 0.15 && median <= 0.6, `${worker}: median interval ${median.toFixed(3)} s`);
  }

  const counter = await entries('counter');
  for (const worker of ['wA', 'wB']) {
    const calls = counter.filter((e) => e.worker === worker).map((e) => e.values?.calls);
    t.ok(calls.length >= 4, `${worker}: ${calls.length} counter values (every 250 ms)`);
    t.same(calls, calls.map((_c, i) => i + 1), `${worker}: every call's value was written, in order (1…${calls.length})`);
  }

  const broken = await entries('broken');
  for (const worker of ['wA', 'wB']) {
    const mine = broken.filter((e) => e.worker === worker);
    t.ok(mine.length >= 3 && mine.every((e) => e.error === 'probe broke' && !e.values), `${worker}: ${mine.length} failed runs counted with their error`);
    const logged = workers[worker as 'wA' | 'wB'].lines.filter((l) => String(l.msg).startsWith('probe failed'));
    t.equal(logged.length, 1, `${worker}: the failing probe is logged once in the test`);
    t.equal(logged[0]?.error, 'probe broke');
  }
  t.equal(workers.wC.lines.filter((l) => String(l.msg).startsWith('probe')).length, 0, 'wC ran no probe');
  t.equal(workers.wA.lines.filter((l) => l.msg === 'test stopped').length, 1, 'and the test went on');
  t.same(((await backend.send(['SMEMBERS', keys.probes()])) as string[]).sort(), ['answer', 'broken', 'counter'], 'the probes index names the streams');

  const fromApi = await api(port, 'GET', '/api/probes');
  t.equal(fromApi.status, 200);
  t.equal(fromApi.body.epoch, epoch);
  const byName = Object.fromEntries((fromApi.body.probes as { name: string; points: { worker: string; values: Record<string, number> }[]; errors: Record<string, number>; lastError?: string }[]).map((p) => [p.name, p]));
  t.same(Object.keys(byName).sort(), ['answer', 'broken', 'counter']);
  t.same(byName.answer!.points.map((p) => [p.worker, p.values.value]), answer.map((e) => [e.worker, e.values!.value]), '/api/probes returns the stream values');
  t.equal(byName.counter!.points.length, counter.length);
  t.same(byName.broken!.errors, { wA: broken.filter((e) => e.worker === 'wA').length, wB: broken.filter((e) => e.worker === 'wB').length }, 'failed runs counted per worker');
  t.equal(byName.broken!.lastError, 'probe broke');

  const report = await fetch(`http://127.0.0.1:${port}/api/report`).then((r) => r.text());
  t.match(report, /<h2>Probes<\/h2>/, 'the HTML report has a probes section');
  t.match(report, new RegExp(`<td>answer</td><td>${answer.length}</td><td>0</td>`), 'with the number of values of each probe');
});

t.test('the page charts the probes on its Probes tab', async (t) => {
  const browser = await chromium.launch(launchOptions);
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.getByTestId('state').filter({ hasText: 'IDLE' }).waitFor();
  await page.getByTestId('tab-probes').click();
  await page.locator('[data-testid=probe-chart][data-probe=answer] canvas').waitFor({ timeout: 10_000 });
  t.equal(await page.isHidden('#tab-results'), true, 'the results are hidden behind their tab');
  const drawn = await page.evaluate(() => {
    const charts = (document.querySelector('#probe-charts') as unknown as { probeCharts: Record<string, { u: { data: (number | null | undefined)[][]; series: { label: string }[] } }> }).probeCharts;
    const u = charts.answer!.u;
    return u.series.slice(1).map((s, i) => [s.label, [...new Set(u.data[i + 1]!.filter((v) => v != null))]]).sort();
  });
  t.same(drawn, [['wA', [41]], ['wB', [42]]], 'the answer chart has a line per worker with its values');
  t.match(await page.textContent('[data-testid=probes-text]'), /answer \(\d+ values\).*failing: broken: probe broke/, 'the tab names the probes and the failing one');
});

t.test('coord load run --run-probes puts the probes in its HTML report', async (t) => {
  const report = join(mkdtempSync(join(tmpdir(), 'probes-')), 'report.html');
  const r = coordSync(['load', 'run', '--scenario', 'test/fixtures/load-test/probed.mjs', '--users', '2', '--duration', '2s', '--run-probes', '--report', report]);
  t.equal(r.status, 0, r.stderr);
  const html = readFileSync(report, 'utf8');
  const row = /<td>answer<\/td><td>(\d+)<\/td><td>0<\/td>/.exec(html);
  t.ok(row && Number(row[1]) >= 4, `the report counts the answer probe's values (${row?.[1]})`);
  t.match(html, /<td>broken<\/td><td>0<\/td><td>[1-9]\d*<\/td><td>probe broke<\/td>/, 'and the failing probe with its error');
  t.match(html, /CoordCharts\.drawProbes\(/, 'and charts them');
  const without = coordSync(['load', 'run', '--scenario', 'test/fixtures/load-test/probed.mjs', '--users', '1', '--duration', '1s', '--report', report]);
  t.equal(without.status, 0, without.stderr);
  t.notMatch(readFileSync(report, 'utf8'), /<h2>Probes<\/h2>/, 'without --run-probes no probe runs');
});

t.test('coord load run --run-probes --out json: the probes in the JSON; the report charts them side by side, none overlapping', async (t) => {
  const report = join(mkdtempSync(join(tmpdir(), 'probes-')), 'report.html');
  const r = coordSync(['load', 'run', '--scenario', 'test/fixtures/load-test/probed.mjs', '--users', '2', '--duration', '2s', '--run-probes', '--report', report, '--out', 'json']);
  t.equal(r.status, 0, r.stderr);
  const json = JSON.parse(r.stdout) as { probes: { name: string; points: { values: Record<string, number> }[] }[] };
  const answer = json.probes.find((p) => p.name === 'answer');
  t.ok(answer && answer.points.length >= 4, `the JSON has the answer probe's values (${answer?.points.length})`);
  t.ok(answer!.points.every((p) => p.values.value === 42), 'with their values');
  t.same(json.probes.map((p) => p.name).sort(), ['answer', 'broken', 'counter'], 'and every probe');

  const browser = await chromium.launch(launchOptions);
  t.teardown(() => browser.close());
  const { page } = await openSavedReport(t, browser, report);
  await page.locator('[data-testid=probe-chart] canvas').nth(2).waitFor();
  const shots = join(root, 'test/.probe');
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, 'load-report-probes.png'), fullPage: true });
  // The boxes the screenshot shows: each probe chart's frame, title, plot and axes, and the others' frames.
  const boxes = await page.locator('[data-testid=probe-chart]').evaluateAll((charts) =>
    charts.map((c) => {
      const box = (el: Element | null) => {
        const b = el!.getBoundingClientRect();
        return { x: b.x, y: b.y, right: b.right, bottom: b.bottom };
      };
      // The parts drawn (an axis uPlot turns off has no box).
      const drawn = [...c.querySelectorAll('.u-title, .u-wrap, .u-axis, .u-legend')].filter((p) => p.getBoundingClientRect().width > 0);
      return { frame: box(c), parts: drawn.map(box) };
    }),
  );
  t.equal(boxes.length, 3, 'a chart per probe');
  const overlap = (a: { x: number; y: number; right: number; bottom: number }, b: typeof a) => a.x < b.right - 0.5 && b.x < a.right - 0.5 && a.y < b.bottom - 0.5 && b.y < a.bottom - 0.5;
  const inside = (a: { x: number; y: number; right: number; bottom: number }, b: typeof a) => a.x >= b.x - 0.5 && a.right <= b.right + 0.5 && a.y >= b.y - 0.5 && a.bottom <= b.bottom + 0.5;
  for (let i = 0; i < boxes.length; i++) {
    t.ok(boxes[i]!.parts.length >= 4, `chart ${i + 1}: title, plot, an axis or two and legend`);
    t.ok(boxes[i]!.parts.every((p) => inside(p, boxes[i]!.frame)), `chart ${i + 1}: its title, plot, axes and legend stay inside its frame`);
    for (let j = i + 1; j < boxes.length; j++) t.notOk(overlap(boxes[i]!.frame, boxes[j]!.frame), `charts ${i + 1} and ${j + 1} do not overlap`);
  }
  t.ok(boxes[0]!.frame.y === boxes[1]!.frame.y && boxes[0]!.frame.right <= boxes[1]!.frame.x, 'the first two share a row, side by side');
});
