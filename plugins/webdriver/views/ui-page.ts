// The grid page (GET /ui; GET / redirects to it, as Selenium Grid's does):
// orchestrators with their slots, sessions with state, capabilities and
// timings, the queue and the sessions that ended last — live, polling
// POST /graphql every second. With a token the page is opened as
// /ui?token=TOKEN and sends it on as Authorization: Bearer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { credentials, type Gate, UNAUTHORIZED_MESSAGE } from '../auth.ts';
import { sendError } from '../http/serve.ts';

/** GET paths this module answers. */
export function isPagePath(method: string | undefined, path: string): boolean {
  return method === 'GET' && (path === '/' || path === '/ui' || path === '/ui/');
}

/** Answers GET /ui (the page) or GET / (a redirect to it, query kept); the token may come as ?token= here, since a browser's address bar cannot send a header. */
export function servePage(gate: Gate, req: IncomingMessage, res: ServerResponse): void {
  const target = req.url ?? '/';
  if (credentials(gate, req.headers.authorization, target) !== 'token') return sendError(res, 'unauthorized', UNAUTHORIZED_MESSAGE);
  const [path, query = ''] = target.split('?');
  if (path === '/') {
    res.writeHead(302, { location: `/ui${query ? `?${query}` : ''}`, 'cache-control': 'no-store' }).end();
    return;
  }
  const body = Buffer.from(PAGE);
  res
    .writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
    })
    .end(body);
}

const QUERY = `{
  grid { totalSlots sessionCount sessionQueueSize nodeCount version }
  nodesInfo { nodes { id status uri maxSession sessionCount browsers slots { id stereotype lastStarted sessionId } } }
  sessionsInfo { sessions { ...s } queue { ...s } ended(limit: 20) { ...s } }
}
fragment s on Session { id state capabilities requestedCapabilities queuedAt pendingAt aliveAt terminatedAt queuedSeconds startupSeconds aliveSeconds lastCode recording events { time eventType payload offset } nodeId slot { id } }`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coord webdriver grid</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2330; background: #f6f7f9; }
h1 { font-size: 1.3rem; margin: 0 0 .3rem; } h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
#summary span { margin-right: 1.2rem; } #error { color: #a11; font-weight: 600; }
.nodes { display: flex; flex-wrap: wrap; gap: .8rem; }
.node { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: .6rem .8rem; min-width: 18rem; }
.node[data-status=DOWN] { opacity: .55; }
.slot { display: inline-block; margin: .25rem .3rem 0 0; padding: .2rem .45rem; border-radius: 4px; background: #e6f4ea; font-size: 12px; }
.slot[data-busy=true] { background: #fde7c8; }
table { border-collapse: collapse; width: 100%; background: #fff; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e6eb; vertical-align: top; font-size: 13px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } .state { font-weight: 600; }
tr[data-state=alive] .state { color: #137333; } tr[data-state=pending] .state, tr[data-state=queued] .state { color: #b06000; } tr[data-state=terminated] .state { color: #5f6368; }
.timeline button { font: inherit; border: 0; background: none; color: #1a5fb4; cursor: pointer; padding: 0; }
details pre { max-width: 40rem; white-space: pre-wrap; font-size: 12px; margin: .2rem 0; } .muted { color: #5f6368; }
</style></head>
<body>
<h1>coord webdriver grid</h1>
<div id="summary" data-testid="summary"></div><div id="error" data-testid="error"></div>
<h2>Orchestrators</h2><div class="nodes" id="nodes" data-testid="nodes"></div>
<h2>Sessions</h2>
<table><thead><tr><th>session</th><th>state</th><th>browser</th><th>orchestrator / slot</th><th>queued at</th><th>waited s</th><th>startup s</th><th>alive s</th><th>last code</th><th>events</th><th>video</th><th>capabilities</th></tr></thead>
<tbody id="sessions" data-testid="sessions"></tbody></table>
<div id="player" data-testid="player" hidden><h2>Recording <span id="playing" class="muted"></span></h2><video id="video" data-testid="video" controls preload="metadata" width="640"></video>
<ol id="timeline" data-testid="timeline" class="timeline"></ol></div>
<h2>Queue</h2><table><thead><tr><th>session</th><th>waiting s</th><th>requested capabilities</th></tr></thead><tbody id="queue" data-testid="queue"></tbody></table>
<p class="muted">Updated every second from <code>POST /graphql</code> (Selenium Grid's schema). <span id="updated" data-testid="updated"></span></p>
<script>
const QUERY = ${JSON.stringify(QUERY)};
const token = new URLSearchParams(location.search).get('token');
const headers = { 'content-type': 'application/json', ...(token ? { authorization: 'Bearer ' + token } : {}) };
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c === undefined || c === null ? '' : String(c)));
  return e;
};
// The page polls every second. Rebuilding a list would replace the element under
// a click in progress (mousedown on one link, mouseup on its replacement: no
// click) and close an opened <details>; so an entry whose signature is unchanged
// keeps its element, and only entries that changed, came or went are touched.
const kept = new WeakMap(); // container → Map(signature → element)
function keepChildren(container, entries) {
  const before = kept.get(container) || new Map();
  const after = new Map();
  const wanted = entries.map(([signature, build]) => {
    const element = before.get(signature) || build();
    after.set(signature, element);
    return element;
  });
  kept.set(container, after);
  const keep = new Set(wanted);
  for (const child of [...container.children]) if (!keep.has(child)) child.remove();
  wanted.forEach((element, i) => { if (container.children[i] !== element) container.insertBefore(element, container.children[i] || null); });
}
const parse = (text) => { try { return JSON.parse(text); } catch { return {}; } };
const secs = (n) => (typeof n === 'number' ? n.toFixed(1) : '');
const caps = (text) => el('details', {}, el('summary', {}, 'show'), el('pre', {}, JSON.stringify(parse(text), null, 2)));
const browser = (s) => { const c = parse(s.capabilities); return c.browserName ? (c.browserName + ' ' + (c.browserVersion || '')).trim() : ''; };

// a session's Session Event API events (POST se/event): when, into its recording, and what
const at = (e) => (typeof e.offset === 'number' ? '+' + e.offset.toFixed(1) + ' s ' : '');
const eventText = (e) => at(e) + e.eventType + (e.payload !== 'null' ? ' ' + e.payload : '');
function eventsCell(s) {
  if (!s.events.length) return '';
  return el('details', { 'data-testid': 'events-' + s.id }, el('summary', {}, s.events.length + ' · ' + s.events[s.events.length - 1].eventType),
    el('ol', {}, ...s.events.map((e) => el('li', { 'data-testid': 'event' }, eventText(e)))));
}

// the recording's timeline: each event of the session playing, a click seeks the video to it
let playing = null;
function renderTimeline(rows) {
  const s = rows.find((r) => r.id === playing);
  const video = document.getElementById('video');
  keepChildren(document.getElementById('timeline'), (s ? s.events : []).map((e, i) => [playing + '#' + i + JSON.stringify(e), () => {
    const button = el('button', { type: 'button', 'data-testid': 'timeline-event', 'data-offset': e.offset }, eventText(e));
    button.addEventListener('click', () => { if (typeof e.offset === 'number') video.currentTime = e.offset; });
    return el('li', {}, button);
  }]));
}

// the player sits outside the table, whose rows are rebuilt when they change: a video in a row would restart
function recordingLink(s) {
  const a = el('a', { href: s.recording, 'data-testid': 'recording-' + s.id }, 'play');
  a.addEventListener('click', (event) => {
    event.preventDefault();
    const video = document.getElementById('video');
    video.src = s.recording;
    document.getElementById('playing').textContent = s.id;
    playing = s.id;
    document.getElementById('player').hidden = false;
    video.play().catch(() => {}); // a browser may refuse autoplay; the controls still play it
  });
  return a;
}

function render(data) {
  const { grid, nodesInfo, sessionsInfo } = data;
  document.getElementById('summary').replaceChildren(
    el('span', { 'data-testid': 'slots' }, 'slots: ' + grid.sessionCount + ' busy of ' + grid.totalSlots),
    el('span', { 'data-testid': 'queue-size' }, 'queue: ' + grid.sessionQueueSize),
    el('span', {}, 'orchestrators up: ' + grid.nodeCount),
    el('span', { class: 'muted' }, grid.version));
  document.getElementById('nodes').replaceChildren(...nodesInfo.nodes.map((n) => {
    const stereo = parse(n.browsers).map((s) => s.browserName + ' ' + s.browserVersion + ' on ' + s.platformName).join(', ');
    return el('div', { class: 'node', 'data-testid': 'node-' + n.id, 'data-status': n.status },
      el('strong', {}, n.id), ' ', el('span', { class: 'muted' }, n.status + ' · ' + n.sessionCount + '/' + n.maxSession + ' · ' + stereo),
      el('div', {}, ...n.slots.map((slot) => el('span', { class: 'slot', 'data-testid': 'slot-' + slot.id, 'data-busy': !!slot.sessionId, 'data-session': slot.sessionId || '' },
        slot.id + ': ' + (slot.sessionId ? slot.sessionId.slice(0, 8) : 'free')))));
  }));
  const rows = [...sessionsInfo.sessions, ...sessionsInfo.queue, ...sessionsInfo.ended];
  keepChildren(document.getElementById('sessions'), rows.map((s) => [JSON.stringify(s), () => el('tr', { 'data-testid': 'session-' + s.id, 'data-state': s.state },
    el('td', {}, el('code', {}, s.id)), el('td', { class: 'state' }, s.state), el('td', {}, browser(s)),
    el('td', {}, s.nodeId ? s.nodeId + (s.slot ? ' / ' + s.slot.id : '') : ''), el('td', {}, s.queuedAt || ''),
    el('td', { class: 'num' }, secs(s.queuedSeconds)), el('td', { class: 'num' }, secs(s.startupSeconds)), el('td', { class: 'num' }, secs(s.aliveSeconds)),
    el('td', {}, s.lastCode || ''), el('td', {}, eventsCell(s)), el('td', {}, s.recording ? recordingLink(s) : ''), el('td', {}, caps(s.capabilities)))]));
  renderTimeline(rows);
  keepChildren(document.getElementById('queue'), sessionsInfo.queue.map((s) => [JSON.stringify(s), () => el('tr', { 'data-testid': 'queued-' + s.id },
    el('td', {}, el('code', {}, s.id)), el('td', { class: 'num' }, secs(s.queuedSeconds)), el('td', {}, caps(s.requestedCapabilities)))]));
}

async function poll() {
  try {
    const res = await fetch(location.pathname.replace(/ui\\/?$/, '') + 'graphql', { method: 'POST', headers, body: JSON.stringify({ query: QUERY }) });
    if (res.status === 401) throw new Error('the grid wants its token: open this page as /ui?token=TOKEN');
    const answer = await res.json();
    if (answer.errors) throw new Error(answer.errors.map((e) => e.message).join('; '));
    render(answer.data);
    document.getElementById('error').textContent = '';
    document.getElementById('updated').textContent = 'Last update ' + new Date().toLocaleTimeString() + '.';
  } catch (error) {
    document.getElementById('error').textContent = String(error.message || error);
  }
  setTimeout(poll, 1000);
}
poll();
</script>
</body></html>
`;
