// The orchestrator's page: start, stop and change users, reset the
// statistics; live uPlot charts (page-charts.ts) of requests and failures per
// second, latency percentiles and users, with time axes, units and the values
// under the cursor; a headline and a summary drawn from one status (they
// cannot disagree); the per-metric table (Locust's columns: average, min, max,
// current req/s), errors, the Failures tab with each kind's first and last
// text, and workers with CPU and memory. While a test runs, the start form
// shows its settings. It polls /api/status once a second. The last test's
// summary, its thresholds (report-routes.ts evaluates them) and the
// downloads (HTML report, statistics, failures and exceptions CSV, JSON)
// stay on the page after it stops. The running
// test's resources are listed, and more can be added (resource-routes.ts). uPlot is inlined
// (page-assets.ts): the page needs nothing but the orchestrator. The Probes tab
// charts the scenario's probes (GET /api/probes, probes.ts).
import { uplotCss, uplotScript } from './page-assets.ts';
import { chartsScript } from './page-charts.ts';

const body = String.raw`
<header><h1>coord load test</h1><span id="state" data-testid="state">…</span><small id="epoch"></small>
 <span class="actions"><button type="button" id="reset" data-testid="reset" title="Zero the running test's tables and charts, on every worker">Reset stats</button></span></header>
<form id="start">
 <label>scenario<input name="scenario" placeholder="(the orchestrator's default)"></label>
 <label>users<input name="users" type="number" min="1" value="10"></label>
 <label>spawn rate /s<input name="spawnRate" value="10"></label>
 <label>duration<input name="duration" placeholder="e.g. 30s (empty: until stopped)"></label>
 <label>rate /s (arrival)<input name="rate" placeholder="empty: closed model"></label>
 <label>params (JSON)<input name="params" placeholder='{"baseUrl": "http://…"}'></label>
 <button type="submit" data-testid="start">Start</button>
 <button type="button" id="stop" data-testid="stop">Stop</button>
 <span id="form-note" data-testid="form-note"></span>
</form>
<form id="users"><label>change users<input name="users" type="number" min="0" value="20"></label><button type="submit" data-testid="set-users">Set users</button></form>
<form id="thresholds"><label>thresholds (as --threshold, comma-separated)<input name="thresholds" data-testid="thresholds-input" placeholder="p95<200ms, errors<1%"></label><button type="submit" data-testid="set-thresholds">Check</button></form>
<div id="message" data-testid="message"></div>
<nav class="tabs"><button type="button" class="active" data-tab="results" data-testid="tab-results">Results</button><button type="button" data-tab="failures" data-testid="tab-failures">Failures <span id="failure-count" data-testid="failure-count"></span></button><button type="button" data-tab="probes" data-testid="tab-probes">Probes</button></nav>
<section id="tab-probes" hidden><p id="probes-text" data-testid="probes-text"></p><div id="probe-charts" class="charts"></div></section>
<section id="tab-failures" hidden>
 <p class="hint">Each kind of failure with its count, when it came first and last, and the full text of its first and last occurrence (an HTTP error's status and body, a network error's message, an exception's stack).</p>
 <table data-testid="failures"><thead><tr><th>metric</th><th>error</th><th>count</th><th>first</th><th>last</th><th>sample (first / last)</th></tr></thead><tbody></tbody></table>
</section>
<div id="tab-results">
<div class="headline" data-testid="headline">
 <div class="stat"><b data-testid="users">0</b><span>users (target <span id="target" data-testid="target">0</span>)</span></div>
 <div class="stat"><b data-testid="rps-now">0</b><span>req/s now</span></div>
 <div class="stat"><b data-testid="rps">0</b><span>req/s average</span></div>
 <div class="stat"><b data-testid="p95">0</b><span>p95 ms</span></div>
 <div class="stat"><b data-testid="errors">0</b><span>errors (<span data-testid="error-rate">0.00%</span>)</span></div>
 <div class="stat"><b data-testid="requests">0</b><span>requests</span></div>
 <div class="stat"><b data-testid="aborted">0</b><span>aborted by a stop</span></div>
</div>
<section id="summary" data-testid="summary" hidden>
 <h2 id="summary-title"></h2>
 <p id="summary-text" data-testid="summary-text"></p>
 <p id="verdict" data-testid="verdict"></p>
 <table data-testid="threshold-table" hidden><thead><tr><th>threshold</th><th>actual</th><th>result</th></tr></thead><tbody></tbody></table>
 <p class="downloads">download: <a id="report" data-testid="report" href="#">HTML report</a> · <a data-download="stats.csv" data-testid="download-stats-csv" href="#">statistics CSV</a> · <a data-download="failures.csv" data-testid="download-failures-csv" href="#">failures CSV</a> · <a data-download="exceptions.csv" data-testid="download-exceptions-csv" href="#">exceptions CSV</a> · <a data-download="result.json" data-testid="download-json" href="#">everything as JSON</a></p>
</section>
<div id="charts" class="charts"></div>
<h2>metrics <small>(latencies in ms)</small></h2><table data-testid="metrics"><thead><tr><th>metric</th><th>requests</th><th>errors</th><th>aborted</th><th>req/s avg</th><th>req/s now</th><th>mean</th><th>min</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th></tr></thead><tbody></tbody></table>
<h2>errors <small>(the Failures tab has their text)</small></h2><table data-testid="error-table"><thead><tr><th>metric</th><th>error</th><th>count</th></tr></thead><tbody></tbody></table>
<h2>workers</h2><table data-testid="workers"><thead><tr><th>worker</th><th>status</th><th>users</th><th>active</th><th>CPU %</th><th>RSS MB</th><th>memory %</th><th>heartbeat</th></tr></thead><tbody></tbody></table>
<h2>resources</h2>
<form id="resources"><label>name<input name="name" placeholder="e.g. tokens"></label><label>count<input name="count" type="number" min="1" value="10"></label><label>payload (JSON)<input name="data" placeholder='{"token": "…"}'></label><button type="submit" data-testid="add-resources">Add to the running test</button></form>
<table data-testid="resources"><thead><tr><th>resource</th><th>count</th><th>loaded</th><th>free</th><th>held</th><th>first payload</th><th>last payload</th></tr></thead><tbody></tbody></table>
</div>`;

const style = `
 body{font:14px system-ui,sans-serif;margin:0 16px 16px;color:#222;background:#fafbfc}
 header{display:flex;align-items:center;gap:12px;padding:10px 0;border-bottom:1px solid #e3e6ea;margin-bottom:10px}
 header h1{font-size:18px;margin:0} header .actions{margin-left:auto}
 h2{font-size:15px;margin:18px 0 6px} h2 small{font-weight:normal;color:#777}
 form{display:flex;gap:8px;flex-wrap:wrap;align-items:end;margin-bottom:8px}
 label{display:flex;flex-direction:column;font-size:12px;color:#555}
 input{padding:4px;width:9em;border:1px solid #ccd;border-radius:3px} input[name=scenario]{width:22em} input[name=thresholds]{width:22em}
 input[readonly]{background:#eef1f6;color:#333}
 button{padding:5px 12px;border:1px solid #aab;border-radius:3px;background:#fff;cursor:pointer} button:disabled{opacity:.5;cursor:default}
 button[data-testid=start]{background:#1a7f37;color:#fff;border-color:#1a7f37} button[data-testid=stop]{background:#c22;color:#fff;border-color:#c22}
 #form-note{font-size:12px;color:#555;align-self:center}
 .headline{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
 .stat{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:8px 14px;min-width:110px;display:flex;flex-direction:column}
 .stat b{font-size:22px;font-variant-numeric:tabular-nums} .stat span{font-size:12px;color:#666}
 .stat.bad b{color:#b00}
 .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px}
 .chart{border:1px solid #e3e6ea;background:#fff;padding:4px;min-width:0;overflow:hidden}
 table{border-collapse:collapse;margin-top:4px;background:#fff} td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:right;font-variant-numeric:tabular-nums}
 th{background:#f1f3f6;font-weight:600}
 td:first-child,th:first-child{text-align:left}
 tr.fail td{color:#b00;font-weight:bold;background:#fdecec}
 #summary{border:1px solid #ccd;background:#f7f8fc;padding:4px 12px;margin:8px 0}
 #verdict.fail{color:#b00;font-weight:bold} #verdict.ok{color:#161;font-weight:bold}
 #state{font-weight:bold;padding:2px 8px;border-radius:10px;background:#e3e6ea} #state.RUNNING{background:#1a7f37;color:#fff} #state.STOPPING,#state.PREPARING{background:#e80;color:#fff}
 #message{color:#b00}
 .tabs{margin:8px 0;display:flex;gap:4px} .tabs button.active{font-weight:bold;background:#dde}
 [data-testid=failures] td{vertical-align:top} [data-testid=failures] td:nth-child(2),[data-testid=failures] th:nth-child(2),[data-testid=failures] th:last-child{text-align:left}
 .sample{text-align:left;max-width:60em} .sample pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;padding:4px 6px;background:#f6f6f6;border-left:3px solid #c22;font-size:12px;max-height:12em;overflow:auto}
 .hint{color:#666;font-size:12px}`;

const script = String.raw`
const token = new URLSearchParams(location.search).get('token');
const headers = { 'content-type': 'application/json', ...(token ? { authorization: 'Bearer ' + token } : {}) };
const $ = (s) => document.querySelector(s);
const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
let thresholds = localStorage.getItem('coord-load-thresholds') || '';
$('#thresholds input').value = thresholds;
async function call(method, path, body) {
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}
function show(error) { $('#message').textContent = error ? error.message : ''; }
$('#start').addEventListener('submit', (e) => {
  e.preventDefault();
  const f = Object.fromEntries(new FormData(e.target));
  const body = { users: Number(f.users), spawnRate: f.spawnRate };
  if (f.scenario) body.scenario = f.scenario;
  if (f.duration) body.duration = f.duration;
  if (f.rate) body.rate = f.rate;
  if (f.params) {
    try { body.params = JSON.parse(f.params); } catch { show(new Error('params is not JSON: ' + f.params)); return; }
  }
  call('POST', 'api/start', body).then(() => show(), show).then(refresh);
});
$('#stop').addEventListener('click', () => call('POST', 'api/stop').then(() => show(), show).then(refresh));
$('#reset').addEventListener('click', () => call('POST', 'api/reset').then(() => show(), show).then(refresh));
$('#users').addEventListener('submit', (e) => {
  e.preventDefault();
  call('POST', 'api/users', { users: Number(new FormData(e.target).get('users')) }).then(() => show(), show).then(refresh);
});
$('#resources').addEventListener('submit', (e) => {
  e.preventDefault();
  const f = Object.fromEntries(new FormData(e.target));
  const body = { name: f.name, count: Number(f.count) };
  if (f.data) {
    try { body.data = JSON.parse(f.data); } catch { show(new Error('payload is not JSON: ' + f.data)); return; }
  }
  call('POST', 'api/resources', body).then(() => show(), show).then(refresh);
});
$('#thresholds').addEventListener('submit', (e) => {
  e.preventDefault();
  thresholds = String(new FormData(e.target).get('thresholds')).trim();
  localStorage.setItem('coord-load-thresholds', thresholds);
  show();
  refresh();
});
function query() {
  const q = new URLSearchParams();
  if (token) q.set('token', token);
  for (const t of thresholds.split(',').map((t) => t.trim()).filter(Boolean)) q.append('threshold', t);
  return q.toString();
}
function rows(sel, list, cells, rowClass) {
  $(sel + ' tbody').innerHTML = list.map((r) => '<tr class="' + (rowClass ? rowClass(r) : '') + '">' + cells(r).map((c) => '<td>' + esc(c) + '</td>').join('') + '</tr>').join('');
}
const ms = (v) => v.toFixed(v < 10 ? 2 : 1);
const pct = (errors, count) => (count ? (errors / count) * 100 : 0).toFixed(2) + '%';
const time = (at) => new Date(at).toLocaleTimeString();
// The headline's and the summary's numbers, both from this one object of one status: they cannot disagree.
function figures(s) {
  const t = s.result ? s.result.total : { count: 0, errors: 0, aborted: 0, rps: 0, currentRps: 0, p50: 0, p95: 0, p99: 0 };
  return { users: s.users, target: s.target, requests: t.count, errors: t.errors, errorRate: pct(t.errors, t.count), aborted: t.aborted,
    // "now" is 0 once the test is over: its last second's rate is history (the summary keeps the average)
    rps: t.rps.toFixed(1), rpsNow: s.state === 'RUNNING' ? String(t.currentRps) : '0', p50: ms(t.p50), p95: ms(t.p95), p99: ms(t.p99) };
}
function showHeadline(f) {
  for (const [id, v] of [['users', f.users], ['target', f.target], ['rps-now', f.rpsNow], ['rps', f.rps], ['p95', f.p95], ['errors', f.errors], ['error-rate', f.errorRate], ['requests', f.requests], ['aborted', f.aborted]]) {
    $('[data-testid=' + id + ']').textContent = v;
  }
  $('[data-testid=errors]').parentElement.classList.toggle('bad', f.errors > 0);
}
async function showThresholds(s, isCurrent) {
  const table = $('[data-testid=threshold-table]');
  const verdict = $('#verdict');
  if (!thresholds) { table.hidden = true; verdict.textContent = ''; return; }
  let outcomes;
  try { outcomes = (await call('GET', 'api/thresholds?' + query())).thresholds; } catch (e) { show(e); return; }
  if (!isCurrent()) return;
  table.hidden = false;
  rows('[data-testid=threshold-table]', outcomes, (o) => [o.threshold, o.shown, o.ok ? 'ok' : 'FAIL'], (o) => (o.ok ? 'ok' : 'fail'));
  const failed = outcomes.filter((o) => !o.ok);
  const word = s.state === 'IDLE' ? '' : ' so far';
  verdict.className = failed.length ? 'fail' : 'ok';
  verdict.textContent = failed.length ? 'FAILED' + word + ': ' + failed.map((o) => o.threshold).join(', ') : 'thresholds pass' + word;
}
function showSummary(s, r, f) {
  $('#summary').hidden = false;
  $('#summary-title').textContent = s.state === 'IDLE' ? 'last test (epoch ' + r.epoch + ')' : 'this test (epoch ' + r.epoch + ')';
  $('#summary-text').textContent = [r.scenario || '', r.mode, r.durationS.toFixed(1) + ' s', 'peak ' + r.peakUsers + ' users', f.requests + ' requests',
    f.errors + ' errors (' + f.errorRate + ')', f.aborted ? f.aborted + ' aborted' : '', f.rps + ' req/s', 'p50 ' + f.p50 + ' ms', 'p95 ' + f.p95 + ' ms', 'p99 ' + f.p99 + ' ms',
    // the errors apart when steps threw: Locust's failure rate is of the requests alone
    r.failed && r.failed.steps ? 'errors apart: ' + r.failed.requests + ' of ' + r.failed.ofRequests + ' requests failed (' + pct(r.failed.requests, r.failed.ofRequests) + '), ' + r.failed.steps + ' steps threw' : '']
    .concat(s.noRequests ? ['it ran no requests'] : []).filter(Boolean).join(' · ');
  const a = $('#report');
  a.href = 'api/report?' + query();
  a.download = 'load-test-epoch-' + r.epoch + '.html';
  for (const d of document.querySelectorAll('[data-download]')) {
    d.href = 'api/' + d.dataset.download + '?' + query();
    d.download = 'load-test-epoch-' + r.epoch + '-' + d.dataset.download;
  }
}
// While a test runs the form shows its settings (read-only); between tests it keeps them to start the next one.
let shownSettings = '';
function showForm(s) {
  const running = s.state !== 'IDLE';
  const form = $('#start');
  for (const input of form.querySelectorAll('input')) input.readOnly = running;
  form.querySelector('[data-testid=start]').disabled = running;
  $('#form-note').textContent = running && s.settings ? 'the running test’s settings' : '';
  const key = running && s.settings ? s.epoch + JSON.stringify(s.settings) : '';
  if (!key || key === shownSettings) return;
  shownSettings = key;
  const v = s.settings;
  const set = (name, value) => (form.querySelector('[name=' + name + ']').value = value === undefined ? '' : value);
  set('scenario', v.scenario); set('users', v.users); set('spawnRate', v.spawnRate); set('duration', v.duration); set('rate', v.rate);
  set('params', v.params ? JSON.stringify(v.params) : '');
}
function showFailures(r) {
  const list = r ? r.errors : [];
  $('#failure-count').textContent = list.length ? '(' + list.reduce((n, e) => n + e.count, 0) + ')' : '';
  $('[data-testid=failures] tbody').innerHTML = list.map((e) =>
    '<tr data-testid="failure"><td>' + esc(e.metric) + '</td><td>' + esc(e.message) + '</td><td>' + e.count + '</td><td>' + time(e.firstAt) + '</td><td>' + time(e.lastAt) + '</td>' +
    '<td class="sample" data-testid="failure-sample"><pre data-testid="failure-first">' + esc(e.first) + '</pre>' + (e.last !== e.first ? '<pre data-testid="failure-last">' + esc(e.last) + '</pre>' : '') + '</td></tr>').join('');
}
let tab = 'results';
for (const b of document.querySelectorAll('.tabs button')) {
  b.addEventListener('click', () => {
    tab = b.dataset.tab;
    for (const o of document.querySelectorAll('.tabs button')) o.classList.toggle('active', o === b);
    for (const name of ['results', 'failures', 'probes']) $('#tab-' + name).hidden = tab !== name;
    refresh();
  });
}
async function showProbes() {
  let d;
  try { d = await call('GET', 'api/probes'); } catch (e) { show(e); return; }
  const failed = d.probes.filter((p) => Object.keys(p.errors).length);
  $('#probes-text').textContent = d.probes.length
    ? 'epoch ' + d.epoch + ': ' + d.probes.map((p) => p.name + ' (' + p.points.length + ' values)').join(', ') + (failed.length ? ' · failing: ' + failed.map((p) => p.name + ': ' + p.lastError).join('; ') : '')
    : 'no probe values in this test (probes run on workers started with --run-probes)';
  CoordCharts.drawProbes($('#probe-charts'), d.probes);
}
// Refreshes overlap (the timer, a button): only the latest one draws, all of it from one status.
let latest = 0;
async function refresh() {
  const mine = ++latest;
  const isCurrent = () => mine === latest;
  if (tab === 'probes') return showProbes();
  let s;
  try { s = await call('GET', 'api/status'); } catch (e) { show(e); return; }
  if (!isCurrent()) return;
  $('#state').textContent = s.state; $('#state').className = s.state; $('#epoch').textContent = 'epoch ' + s.epoch;
  const r = s.result;
  const f = figures(s);
  showHeadline(f);
  showForm(s);
  showFailures(r);
  rows('[data-testid=metrics]', r ? r.metrics : [], (m) => [m.name, m.count, m.errors, m.aborted, m.rps.toFixed(1), m.currentRps, ms(m.mean), ms(m.min), ms(m.p50), ms(m.p90), ms(m.p95), ms(m.p99), ms(m.max)]);
  rows('[data-testid=error-table]', r ? r.errors : [], (e) => [e.metric, e.message, e.count]);
  rows('[data-testid=workers]', s.workers, (w) => [w.id, w.status, w.users, w.active_users, w.cpu_percent, (w.rss_bytes / 1048576).toFixed(1), w.memory_percent, w.lastHeartbeatAgeS === null ? '-' : w.lastHeartbeatAgeS + 's ago']);
  if (r) {
    CoordCharts.draw($('#charts'), r);
    showSummary(s, r, f);
  }
  const resources = await call('GET', 'api/resources').then((d) => d.resources, () => []);
  if (!isCurrent()) return;
  rows('[data-testid=resources]', resources, (x) => [x.name, x.count, x.loaded, x.free, x.held, JSON.stringify(x.first), JSON.stringify(x.last)]);
  if (r) await showThresholds(s, isCurrent);
}
refresh(); setInterval(refresh, 1000);`;

export const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coord load test</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${uplotCss}</style>
<style>${style}</style></head><body>${body}
<script>${uplotScript}</script>
<script>${chartsScript}</script>
<script>${script}</script></body></html>`;
