// The orchestrator's page: start, stop and change users; live uPlot charts
// (page-charts.ts) of requests and failures per second, latency percentiles
// and users, with time axes, units and the values under the cursor; the
// error % in the headline; the per-metric table, errors, and workers with
// CPU and memory. It polls /api/status once a second. The last test's
// summary, its thresholds (report-routes.ts evaluates them) and a link to
// download its HTML report stay on the page after it stops. The running
// test's resources are listed, and more can be added (resource-routes.ts). uPlot is inlined
// (page-assets.ts): the page needs nothing but the orchestrator. The Probes tab
// charts the scenario's probes (GET /api/probes, probes.ts).
import { uplotCss, uplotScript } from './page-assets.ts';
import { chartsScript } from './page-charts.ts';

const body = String.raw`
<h1>coord load test — <span id="state" data-testid="state">…</span> <small id="epoch"></small></h1>
<form id="start">
 <label>scenario<input name="scenario" placeholder="(the orchestrator's default)"></label>
 <label>users<input name="users" type="number" min="1" value="10"></label>
 <label>spawn rate /s<input name="spawnRate" value="10"></label>
 <label>duration<input name="duration" placeholder="e.g. 30s (empty: until stopped)"></label>
 <label>rate /s (arrival)<input name="rate" placeholder="empty: closed model"></label>
 <label>params (JSON)<input name="params" placeholder='{"baseUrl": "http://…"}'></label>
 <button type="submit" data-testid="start">Start</button>
 <button type="button" id="stop" data-testid="stop">Stop</button>
</form>
<form id="users"><label>change users<input name="users" type="number" min="0" value="20"></label><button type="submit" data-testid="set-users">Set users</button></form>
<form id="thresholds"><label>thresholds (as --threshold, comma-separated)<input name="thresholds" data-testid="thresholds-input" placeholder="p95<200ms, errors<1%"></label><button type="submit" data-testid="set-thresholds">Check</button></form>
<div id="message" data-testid="message"></div>
<nav class="tabs"><button type="button" class="active" data-tab="results" data-testid="tab-results">Results</button><button type="button" data-tab="probes" data-testid="tab-probes">Probes</button></nav>
<section id="tab-probes" hidden><p id="probes-text" data-testid="probes-text"></p><div id="probe-charts" class="charts"></div></section>
<div id="tab-results">
<p class="headline"><span data-testid="users">0</span> users (target <span id="target">0</span>) · <span data-testid="rps">0</span> req/s · p95 <span data-testid="p95">0</span> ms · errors <span data-testid="errors">0</span> (<span data-testid="error-rate">0.00%</span>) · requests <span data-testid="requests">0</span></p>
<section id="summary" data-testid="summary" hidden>
 <h2 id="summary-title"></h2>
 <p id="summary-text" data-testid="summary-text"></p>
 <p id="verdict" data-testid="verdict"></p>
 <table data-testid="threshold-table" hidden><thead><tr><th>threshold</th><th>actual</th><th>result</th></tr></thead><tbody></tbody></table>
 <p><a id="report" data-testid="report" href="#">download the HTML report</a></p>
</section>
<div id="charts" class="charts"></div>
<h2>metrics</h2><table data-testid="metrics"><thead><tr><th>metric</th><th>requests</th><th>errors</th><th>req/s</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th></tr></thead><tbody></tbody></table>
<h2>errors</h2><table data-testid="error-table"><thead><tr><th>metric</th><th>error</th><th>count</th></tr></thead><tbody></tbody></table>
<h2>workers</h2><table data-testid="workers"><thead><tr><th>worker</th><th>status</th><th>users</th><th>active</th><th>CPU %</th><th>RSS MB</th><th>memory %</th><th>heartbeat</th></tr></thead><tbody></tbody></table>
<h2>resources</h2>
<form id="resources"><label>name<input name="name" placeholder="e.g. tokens"></label><label>count<input name="count" type="number" min="1" value="10"></label><label>payload (JSON)<input name="data" placeholder='{"token": "…"}'></label><button type="submit" data-testid="add-resources">Add to the running test</button></form>
<table data-testid="resources"><thead><tr><th>resource</th><th>count</th><th>loaded</th><th>free</th><th>held</th><th>first payload</th><th>last payload</th></tr></thead><tbody></tbody></table>
</div>`;

const style = `
 body{font:14px system-ui,sans-serif;margin:16px;color:#222}
 h1{font-size:18px;margin:0 0 12px} h2{font-size:15px;margin:18px 0 6px}
 form{display:flex;gap:8px;flex-wrap:wrap;align-items:end;margin-bottom:8px}
 label{display:flex;flex-direction:column;font-size:12px;color:#555}
 input{padding:4px;width:9em} input[name=scenario]{width:22em} input[name=thresholds]{width:22em}
 button{padding:5px 12px}
 .headline{font-size:16px}
 .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px}
 .chart{border:1px solid #ddd;padding:4px;min-width:0}
 table{border-collapse:collapse;margin-top:4px} td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:right}
 td:first-child,th:first-child{text-align:left}
 tr.fail td{color:#b00;font-weight:bold;background:#fdecec}
 #summary{border:1px solid #ccd;background:#f7f8fc;padding:4px 12px;margin:8px 0}
 #verdict.fail{color:#b00;font-weight:bold} #verdict.ok{color:#161;font-weight:bold}
 #state{font-weight:bold} #message{color:#b00}
 .tabs{margin:8px 0;display:flex;gap:4px} .tabs button.active{font-weight:bold;background:#dde}`;

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
async function showThresholds(s) {
  const table = $('[data-testid=threshold-table]');
  const verdict = $('#verdict');
  if (!thresholds) { table.hidden = true; verdict.textContent = ''; return; }
  let outcomes;
  try { outcomes = (await call('GET', 'api/thresholds?' + query())).thresholds; } catch (e) { show(e); return; }
  table.hidden = false;
  rows('[data-testid=threshold-table]', outcomes, (o) => [o.threshold, o.shown, o.ok ? 'ok' : 'FAIL'], (o) => (o.ok ? 'ok' : 'fail'));
  const failed = outcomes.filter((o) => !o.ok);
  const word = s.state === 'IDLE' ? '' : ' so far';
  verdict.className = failed.length ? 'fail' : 'ok';
  verdict.textContent = failed.length ? 'FAILED' + word + ': ' + failed.map((o) => o.threshold).join(', ') : 'thresholds pass' + word;
}
function showSummary(s, r) {
  $('#summary').hidden = false;
  $('#summary-title').textContent = s.state === 'IDLE' ? 'last test (epoch ' + r.epoch + ')' : 'this test (epoch ' + r.epoch + ')';
  const t = r.total;
  $('#summary-text').textContent = [r.scenario || '', r.mode, r.durationS.toFixed(1) + ' s', 'peak ' + r.peakUsers + ' users', t.count + ' requests',
    t.errors + ' errors (' + pct(t.errors, t.count) + ')', t.rps.toFixed(1) + ' req/s', 'p50 ' + ms(t.p50) + ' ms', 'p95 ' + ms(t.p95) + ' ms', 'p99 ' + ms(t.p99) + ' ms']
    .concat(s.noRequests ? ['it ran no requests'] : []).filter(Boolean).join(' · ');
  const a = $('#report');
  a.href = 'api/report?' + query();
  a.download = 'load-test-epoch-' + r.epoch + '.html';
}
let tab = 'results';
for (const b of document.querySelectorAll('.tabs button')) {
  b.addEventListener('click', () => {
    tab = b.dataset.tab;
    for (const o of document.querySelectorAll('.tabs button')) o.classList.toggle('active', o === b);
    $('#tab-results').hidden = tab !== 'results';
    $('#tab-probes').hidden = tab !== 'probes';
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
async function refresh() {
  if (tab === 'probes') return showProbes();
  let s;
  try { s = await call('GET', 'api/status'); } catch (e) { show(e); return; }
  $('#state').textContent = s.state; $('#epoch').textContent = 'epoch ' + s.epoch;
  $('[data-testid=users]').textContent = s.users; $('#target').textContent = s.target;
  const r = s.result; const series = r ? r.series : [];
  const recent = series.slice(-2, -1)[0] || series.at(-1);
  $('[data-testid=rps]').textContent = recent ? recent.rps : 0;
  $('[data-testid=p95]').textContent = r ? ms(r.total.p95) : 0;
  $('[data-testid=errors]').textContent = r ? r.total.errors : 0;
  $('[data-testid=error-rate]').textContent = r ? pct(r.total.errors, r.total.count) : '0.00%';
  $('[data-testid=requests]').textContent = r ? r.total.count : 0;
  rows('[data-testid=metrics]', r ? r.metrics : [], (m) => [m.name, m.count, m.errors, m.rps, ms(m.p50), ms(m.p90), ms(m.p95), ms(m.p99), ms(m.max)]);
  rows('[data-testid=error-table]', r ? r.errors : [], (e) => [e.metric, e.message, e.count]);
  rows('[data-testid=workers]', s.workers, (w) => [w.id, w.status, w.users, w.active_users, w.cpu_percent, (w.rss_bytes / 1048576).toFixed(1), w.memory_percent, w.lastHeartbeatAgeS === null ? '-' : w.lastHeartbeatAgeS + 's ago']);
  const resources = await call('GET', 'api/resources').then((d) => d.resources, () => []);
  rows('[data-testid=resources]', resources, (x) => [x.name, x.count, x.loaded, x.free, x.held, JSON.stringify(x.first), JSON.stringify(x.last)]);
  if (!r) return;
  CoordCharts.draw($('#charts'), r);
  showSummary(s, r);
  await showThresholds(s);
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
