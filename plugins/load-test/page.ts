// The orchestrator's page: start, stop and change users; live charts of
// requests per second, latency percentiles and users over time; the
// per-metric table, errors, and workers with CPU and memory. It polls
// /api/status once a second and draws the series as SVG lines.
export const page = String.raw`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coord load test</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body{font:14px system-ui,sans-serif;margin:16px;color:#222}
 h1{font-size:18px;margin:0 0 12px} h2{font-size:15px;margin:18px 0 6px}
 form{display:flex;gap:8px;flex-wrap:wrap;align-items:end;margin-bottom:8px}
 label{display:flex;flex-direction:column;font-size:12px;color:#555}
 input{padding:4px;width:9em} input[name=scenario]{width:22em}
 button{padding:5px 12px}
 .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px}
 .chart{border:1px solid #ddd;padding:6px} .chart svg{width:100%;height:140px}
 table{border-collapse:collapse;margin-top:4px} td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:right}
 td:first-child,th:first-child{text-align:left}
 #state{font-weight:bold} #message{color:#b00}
 .legend span{margin-right:10px;font-size:12px}
</style></head><body>
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
<div id="message" data-testid="message"></div>
<p><span data-testid="users">0</span> users (target <span id="target">0</span>) · <span data-testid="rps">0</span> req/s · p95 <span data-testid="p95">0</span> ms · errors <span data-testid="errors">0</span> · requests <span data-testid="requests">0</span></p>
<div class="charts">
 <div class="chart"><b>requests / s</b><svg id="chart-rps" data-testid="chart-rps" viewBox="0 0 300 100" preserveAspectRatio="none"></svg></div>
 <div class="chart"><b>latency ms</b> <span class="legend"><span style="color:#1a7">p50</span><span style="color:#e80">p95</span><span style="color:#c22">p99</span></span><svg id="chart-latency" data-testid="chart-latency" viewBox="0 0 300 100" preserveAspectRatio="none"></svg></div>
 <div class="chart"><b>users</b><svg id="chart-users" data-testid="chart-users" viewBox="0 0 300 100" preserveAspectRatio="none"></svg></div>
</div>
<h2>metrics</h2><table data-testid="metrics"><thead><tr><th>metric</th><th>requests</th><th>errors</th><th>req/s</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th></tr></thead><tbody></tbody></table>
<h2>errors</h2><table data-testid="error-table"><thead><tr><th>metric</th><th>error</th><th>count</th></tr></thead><tbody></tbody></table>
<h2>workers</h2><table data-testid="workers"><thead><tr><th>worker</th><th>status</th><th>users</th><th>active</th><th>CPU %</th><th>RSS MB</th><th>memory %</th><th>heartbeat</th></tr></thead><tbody></tbody></table>
<script>
const token = new URLSearchParams(location.search).get('token');
const headers = { 'content-type': 'application/json', ...(token ? { authorization: 'Bearer ' + token } : {}) };
const $ = (s) => document.querySelector(s);
const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
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
  call('POST', '/api/start', body).then(() => show(), show).then(refresh);
});
$('#stop').addEventListener('click', () => call('POST', '/api/stop').then(() => show(), show).then(refresh));
$('#users').addEventListener('submit', (e) => {
  e.preventDefault();
  call('POST', '/api/users', { users: Number(new FormData(e.target).get('users')) }).then(() => show(), show).then(refresh);
});
function line(points, key, color, max) {
  if (!points.length) return '';
  const n = Math.max(points.length - 1, 1);
  const xy = points.map((p, i) => (i / n * 300).toFixed(1) + ',' + (100 - (p[key] / max) * 95).toFixed(1)).join(' ');
  return '<polyline fill="none" stroke="' + color + '" stroke-width="1.5" vector-effect="non-scaling-stroke" points="' + xy + '" data-series="' + key + '" data-points="' + points.length + '"/>';
}
function chart(id, points, series) {
  const max = Math.max(1, ...points.flatMap((p) => series.map(([k]) => p[k])));
  $(id).innerHTML = series.map(([k, c]) => line(points, k, c, max)).join('') + '<text x="2" y="10" font-size="9">' + max.toFixed(max < 10 ? 1 : 0) + '</text>';
}
function rows(sel, list, cells) { $(sel + ' tbody').innerHTML = list.map((r) => '<tr>' + cells(r).map((c) => '<td>' + esc(c) + '</td>').join('') + '</tr>').join(''); }
const ms = (v) => v.toFixed(v < 10 ? 2 : 1);
async function refresh() {
  let s;
  try { s = await call('GET', '/api/status'); } catch (e) { show(e); return; }
  $('#state').textContent = s.state; $('#epoch').textContent = 'epoch ' + s.epoch;
  $('[data-testid=users]').textContent = s.users; $('#target').textContent = s.target;
  const r = s.result; const series = r ? r.series : [];
  const recent = series.slice(-2, -1)[0] || series.at(-1);
  $('[data-testid=rps]').textContent = recent ? recent.rps : 0;
  $('[data-testid=p95]').textContent = r ? ms(r.total.p95) : 0;
  $('[data-testid=errors]').textContent = r ? r.total.errors : 0;
  $('[data-testid=requests]').textContent = r ? r.total.count : 0;
  chart('#chart-rps', series, [['rps', '#36c']]);
  chart('#chart-latency', series, [['p50', '#1a7'], ['p95', '#e80'], ['p99', '#c22']]);
  chart('#chart-users', series, [['users', '#639']]);
  rows('[data-testid=metrics]', r ? r.metrics : [], (m) => [m.name, m.count, m.errors, m.rps, ms(m.p50), ms(m.p90), ms(m.p95), ms(m.p99), ms(m.max)]);
  rows('[data-testid=error-table]', r ? r.errors : [], (e) => [e.metric, e.message, e.count]);
  rows('[data-testid=workers]', s.workers, (w) => [w.id, w.status, w.users, w.active_users, w.cpu_percent, (w.rss_bytes / 1048576).toFixed(1), w.memory_percent, w.lastHeartbeatAgeS === null ? '-' : w.lastHeartbeatAgeS + 's ago']);
}
refresh(); setInterval(refresh, 1000);
</script></body></html>`;
