// Screen recordings end to end, on real Redis with real chromedriver,
// Chromium and ffmpeg: a session asking for se:recordVideo spends 5 seconds
// on a page that changes colour each second; its video, fetched through the
// proxy by the link the API gives (whole, and in byte ranges), decodes with
// ffprobe to about that length, and its frames show the colours in order;
// Session Event API events fired as two colours show land, on the recording's
// timeline (GraphQL and the grid page's player), on frames of those colours.
// A session without recording leaves no storage key, no file and runs no
// ffmpeg. A storage process killed -9 loses no finished recording: one made
// while it was down is indexed from the pending list when it comes back. A
// node in its own process announces its recording before it exits.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { chromium } from 'playwright-core';
import { createBackend } from '../adapters/index.ts';
import { buildIfStale } from './support/build.ts';
import { launchOptions } from './support/chromium.ts';
import { coord, type CoordProcess } from './support/cli.ts';
import { freePort, startRedis } from './support/redis.ts';
import { until } from './support/until.ts';
import { newSessionBody, w3c } from './support/webdriver.ts';

buildIfStale();
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const dir = mkdtempSync(join(tmpdir(), 'coord-wd-rec-'));
const folder = join(dir, 'recordings');
const prefix = 'rec:';
const TOKEN = 'recording-test-token';
const auth = { authorization: `Bearer ${TOKEN}` };

/** Five colours, one a second, then the title says done. */
const palette: Record<string, [number, number, number]> = { red: [255, 0, 0], green: [0, 255, 0], blue: [0, 0, 255], yellow: [255, 255, 0], magenta: [255, 0, 255] };
const pagePort = await freePort();
const pageServer = createServer((req, res) => {
  const colours = JSON.stringify(Object.values(palette).map(([r, g, b]) => `rgb(${r},${g},${b})`));
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>running</title>
<style>html,body{margin:0;height:100%;background:${'rgb(255,0,0)'}}</style><body><script>
const colours = ${colours}; let i = 0;
document.body.style.background = colours[0];
const timer = setInterval(() => { i++; if (i < colours.length) document.body.style.background = colours[i]; else { clearInterval(timer); document.title = 'done'; } }, 1000);
</script>`);
});
await new Promise<void>((resolve) => pageServer.listen(pagePort, '127.0.0.1', resolve));

const proxyPort = await freePort();
const apiPort = await freePort();
const proxy = `http://127.0.0.1:${proxyPort}`;
const processes: CoordProcess[] = [];
t.teardown(async () => {
  for (const p of processes) p.kill('SIGKILL');
  await backend.close();
  await new Promise((resolve) => pageServer.close(resolve));
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

const common = ['--redis', redis.url, '--prefix', prefix, '--set', `webdriver.proxy.token=${TOKEN}`, '--set', `webdriver.storage.folder=${folder}`, '--set', 'webdriver.storage.id=rec1', '--set', 'webdriver.heartbeat.interval=1'];
function start(roles: string[], sets: string[] = []): CoordProcess {
  const p = coord(['run', '--plugin', 'webdriver', ...roles.flatMap((r) => ['--role', r]), ...common, ...sets.flatMap((s) => ['--set', `webdriver.${s}`])]);
  processes.push(p);
  return p;
}
const grid = start(['orchestrator', 'manager', 'proxy', 'api'], [`proxy.port=${proxyPort}`, `api.port=${apiPort}`, 'recording.fps=10']);
let storage = start(['storage'], ['storage.interval=1']);
await Promise.all([grid, storage].map((p) => p.waitFor((l) => l.msg === 'ready', 60_000)));

/** A GraphQL query through the proxy: its data. */
const graphql = async (query: string) => ((await (await fetch(`${proxy}/graphql`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query }) })).json()) as { data: unknown }).data;
const api = async (path: string) => (await fetch(`http://127.0.0.1:${apiPort}${path}`, { headers: auth })).json() as Promise<any>;
/** Process command lines naming the session (its ffmpeg writes .{id}.mp4.part). */
function processesNaming(id: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(id) && /ffmpeg/.test(cmd)) found.push(cmd);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function session(caps: Record<string, unknown>): Promise<string> {
  const created = await w3c(proxy, 'POST', '/session', newSessionBody(caps), auth);
  if (created.status !== 200) throw new Error(`new session: ${JSON.stringify(created.body)}`);
  return created.body.value!.sessionId!;
}

/** Opens the colour page, lets ffmpeg encode it for a while, and quits. */
async function recordAWhile(id: string, node: CoordProcess): Promise<void> {
  await w3c(proxy, 'POST', `/session/${id}/url`, { url: `http://127.0.0.1:${pagePort}/colours` }, auth);
  await until('ffmpeg running for the session', () => processesNaming(id).length > 0, 20_000).catch((error) => {
    const said = node.lines.filter((l) => JSON.stringify(l).includes(id)).map((l) => JSON.stringify(l));
    throw new Error(`${(error as Error).message}; the node logged of the session:\n${said.join('\n')}`);
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await w3c(proxy, 'DELETE', `/session/${id}`, undefined, auth);
}

/** Mean colour of each frame at `fps` frames a second, decoded by ffmpeg. */
function frameColours(file: string, fps: number): [number, number, number][] {
  const raw = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-vf', `fps=${fps},scale=1:1:flags=area`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { maxBuffer: 1 << 20 });
  const out: [number, number, number][] = [];
  for (let i = 0; i + 2 < raw.length; i += 3) out.push([raw[i]!, raw[i + 1]!, raw[i + 2]!]);
  return out;
}
function nameOf([r, g, b]: [number, number, number]): string {
  for (const [name, [R, G, B]] of Object.entries(palette)) if (Math.abs(r - R) + Math.abs(g - G) + Math.abs(b - B) < 120) return name;
  return 'other';
}

/** The first test's recorded session, which the page test plays. */
let recorded = '';

t.test('a recorded 5-second session: served through the proxy with Range, the right length, the colours in order', async (t) => {
  const id = await session({ 'se:recordVideo': true });
  recorded = id;
  t.ok(await until('ffmpeg running for the session', () => processesNaming(id).length > 0, 20_000), 'an ffmpeg encodes the session while it runs');
  const nav = await w3c(proxy, 'POST', `/session/${id}/url`, { url: `http://127.0.0.1:${pagePort}/colours` }, auth);
  t.equal(nav.status, 200);
  // Session Event API events as each of two colours shows: the recording's timeline must put them on those frames
  const background = async () => (await w3c(proxy, 'POST', `/session/${id}/execute/sync`, { script: 'return getComputedStyle(document.body).backgroundColor', args: [] }, auth)).body.value;
  for (const colour of ['blue', 'yellow'] as const) {
    const [r, g, b] = palette[colour];
    await until(`the page to turn ${colour}`, async () => (await background()) === `rgb(${r}, ${g}, ${b})`, 15_000, 30);
    const fired = await w3c(proxy, 'POST', `/session/${id}/se/event`, { eventType: `colour:${colour}`, payload: { colour } }, auth);
    t.equal(fired.body.value?.success, true, `se/event colour:${colour}: success`);
  }
  await until('the page to have shown its five colours', async () => (await w3c(proxy, 'GET', `/session/${id}/title`, undefined, auth)).body.value === 'done', 30_000, 100);
  t.equal((await w3c(proxy, 'DELETE', `/session/${id}`, undefined, auth)).status, 200);

  const view = await until('the API to link the recording', async () => (await api(`/api/sessions/${id}`)).recording as string | undefined, 60_000, 200);
  t.match(view, new RegExp(`^/storage/rec1/${id}\\.mp4\\?token=[A-Za-z0-9_-]+$`), 'the link is on the proxy, with the recording\'s own token');
  t.equal(await backend.send(['GET', `${prefix}session:${id}:storage`]), 'rec1', 'session:{id}:storage names the storage');

  const whole = await fetch(proxy + view);
  t.equal(whole.status, 200);
  t.equal(whole.headers.get('content-type'), 'video/mp4');
  t.equal(whole.headers.get('accept-ranges'), 'bytes');
  const bytes = Buffer.from(await whole.arrayBuffer());
  t.equal(bytes.length, Number(whole.headers.get('content-length')));
  t.equal(bytes.subarray(4, 8).toString(), 'ftyp', 'an MP4');

  const first = await fetch(proxy + view, { headers: { range: 'bytes=0-99' } });
  t.equal(first.status, 206);
  t.equal(first.headers.get('content-range'), `bytes 0-99/${bytes.length}`);
  t.same(Buffer.from(await first.arrayBuffer()), bytes.subarray(0, 100), 'bytes 0-99');
  const middle = await fetch(proxy + view, { headers: { range: `bytes=1000-` } });
  t.equal(middle.status, 206);
  t.same(Buffer.from(await middle.arrayBuffer()), bytes.subarray(1000), 'from byte 1000 to the end');
  const last = await fetch(proxy + view, { headers: { range: 'bytes=-50' } });
  t.same(Buffer.from(await last.arrayBuffer()), bytes.subarray(bytes.length - 50), 'the last 50 bytes');
  const past = await fetch(proxy + view, { headers: { range: `bytes=${bytes.length}-` } });
  t.equal(past.status, 416, 'a range past the end: 416');
  t.equal(past.headers.get('content-range'), `bytes */${bytes.length}`);
  await past.arrayBuffer();

  const bare = view.split('?')[0]!;
  t.equal((await fetch(proxy + bare)).status, 401, 'no token: 401');
  t.equal((await fetch(proxy + bare, { headers: auth })).status, 200, 'the grid token opens it too');
  const other = await session({});
  t.equal((await fetch(`${proxy}/storage/rec1/${other}.mp4?token=${view.split('token=')[1]}`)).status, 401, 'a recording\'s token opens no other recording');
  await w3c(proxy, 'DELETE', `/session/${other}`, undefined, auth);

  const file = join(dir, 'served.mp4');
  writeFileSync(file, bytes);
  const duration = Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]).toString());
  t.ok(duration >= 4.5 && duration <= 12, `ffprobe: ${duration} s, about the session's length`);
  const names = frameColours(file, 4).map(nameOf);
  const shown = names.filter((n, i) => n !== 'other' && n !== names[i - 1]);
  t.same(shown, ['red', 'green', 'blue', 'yellow', 'magenta'], `the frames show the colours in order (${names.join(' ')})`);
  const seconds = (name: string) => names.filter((n) => n === name).length / 4;
  for (const name of ['green', 'blue', 'yellow']) t.ok(seconds(name) >= 0.5 && seconds(name) <= 1.75, `${name} lasts about a second (${seconds(name)} s)`);

  // the recording's timeline: each event's offset lands on the frames of the colour it was fired on
  const events = ((await graphql(`{ session(id: "${id}") { events { eventType offset } } }`)) as { session: { events: { eventType: string; offset: number }[] } }).session.events;
  t.same(events.map((e) => e.eventType), ['colour:blue', 'colour:yellow'], 'GraphQL lists the events in order');
  for (const e of events) {
    const colour = e.eventType.split(':')[1]!;
    const around = names.slice(Math.floor(e.offset * 4), Math.floor(e.offset * 4) + 3);
    t.ok(around.includes(colour), `${e.eventType} at ${e.offset.toFixed(2)} s into the video: the frames there show ${colour} (${around.join(' ')})`);
  }

  const used = await until('disk.bytes.used to count it', async () => Number(await backend.send(['HGET', `${prefix}metrics:storage:disk.bytes.used`, 'rec1'])) >= bytes.length, 15_000);
  t.ok(used);
  t.ok(Number(await backend.send(['HGET', `${prefix}metrics:storage:disk.bytes.total`, 'rec1'])) > 0, 'disk.bytes.total written');
});

t.test('the grid page links the recording and plays it', async (t) => {
  t.ok(recorded, 'the recorded session of the first test');
  const browser = await chromium.launch(launchOptions);
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(`${proxy}/ui?token=${TOKEN}`);
  const link = page.getByTestId(`recording-${recorded}`);
  await link.waitFor({ timeout: 30_000 });
  t.match(await link.getAttribute('href'), new RegExp(`^/storage/rec1/${recorded}\\.mp4\\?token=`), 'the ended session links its recording');
  await link.click();
  const duration = await page.waitForFunction(() => {
    const video = document.querySelector('video');
    return video && video.readyState >= 1 && Number.isFinite(video.duration) ? video.duration : 0;
  }, undefined, { timeout: 30_000 });
  const seconds = (await duration.jsonValue()) as number;
  t.ok(seconds >= 4.5 && seconds <= 12, `the page's player loaded the video: ${seconds} s`);
  t.equal(await page.evaluate(() => document.querySelector('video')?.error?.code ?? 0), 0, 'no media error');

  const timeline = page.getByTestId('timeline-event');
  await timeline.nth(1).waitFor({ timeout: 30_000 });
  t.match(await timeline.allTextContents(), [/^\+\d+\.\d s colour:blue \{"colour":"blue"\}$/, /^\+\d+\.\d s colour:yellow/], "the recording's timeline lists the session's events with their place in the video");
  const offset = Number(await timeline.nth(1).getAttribute('data-offset'));
  await page.evaluate(() => document.querySelector('video')!.pause());
  await timeline.nth(1).click();
  const at = (await (await page.waitForFunction((want) => {
    const video = document.querySelector('video')!;
    return Math.abs(video.currentTime - want) < 0.3 ? video.currentTime : 0;
  }, offset, { timeout: 10_000 })).jsonValue()) as number;
  t.ok(Math.abs(at - offset) < 0.3, `a click on an event seeks the video to it (${at.toFixed(2)} s, event at ${offset} s)`);
  const cell = page.getByTestId(`events-${recorded}`);
  t.match(await cell.textContent(), /^2 · colour:yellow/, "the session's row counts its events and names the last");
});

t.test('a page that is already still when recording starts is recorded too (a screenshot is the first frame)', async (t) => {
  const id = await session({ 'se:recordVideo': true });
  await w3c(proxy, 'POST', `/session/${id}/url`, { url: `http://127.0.0.1:${pagePort}/plain` }, auth);
  await until('ffmpeg running for the still page', () => processesNaming(id).length > 0, 20_000);
  await w3c(proxy, 'DELETE', `/session/${id}`, undefined, auth);
  const link = await until('the API to link the recording', async () => (await api(`/api/sessions/${id}`)).recording as string | undefined, 60_000, 200);
  const video = await fetch(proxy + link);
  t.equal(video.status, 200, 'its video is served');
  t.ok((await video.arrayBuffer()).byteLength > 0, 'and is not empty');
});

t.test('a session without recording writes no storage key, no file and runs no ffmpeg', async (t) => {
  const pendingBefore = await backend.send(['LLEN', `${prefix}storage:rec1:metadata.pending`]);
  const id = await session({});
  await w3c(proxy, 'POST', `/session/${id}/url`, { url: `http://127.0.0.1:${pagePort}/plain` }, auth);
  t.same(processesNaming(id), [], 'no ffmpeg for it');
  t.equal((await w3c(proxy, 'DELETE', `/session/${id}`, undefined, auth)).status, 200);
  t.equal(await backend.send(['EXISTS', `${prefix}session:${id}:storage`]), 0, 'no session:{id}:storage');
  t.equal(await backend.send(['LLEN', `${prefix}storage:rec1:metadata.pending`]), pendingBefore, 'nothing announced');
  t.notOk(readdirSync(folder).some((f) => f.includes(id)), 'no file in the folder');
  t.equal((await api(`/api/sessions/${id}`)).recording, undefined, 'no link on the API');
  t.notOk(grid.lines.some((l) => l.sessionId === id && /record/.test(l.msg)), 'the node never spoke of recording it');
});

t.test('kill -9 of the storage process loses no finished recording', async (t) => {
  const before = await session({ 'coord:options': { recordVideo: true } });
  await recordAWhile(before, grid);
  const link = await until('the first recording linked', async () => (await api(`/api/sessions/${before}`)).recording as string | undefined, 60_000, 200);
  t.equal((await fetch(proxy + link)).status, 200, 'served before the kill');

  storage.kill('SIGKILL');
  await storage.exited;
  const during = await session({ 'se:recordVideo': true });
  await recordAWhile(during, grid);
  const pending = await until('the node to announce its recording with no storage running', async () => ((await backend.send(['LRANGE', `${prefix}storage:rec1:metadata.pending`, 0, -1])) as string[]).find((i) => i.includes(during)), 60_000, 200);
  t.match(JSON.parse(pending), { sessionId: during, file: `${during}.mp4` }, 'the pending entry names the file');
  const down = await fetch(`${proxy}/storage/rec1/${during}.mp4`, { headers: auth });
  t.equal(down.status, 503, 'no provider: 503');
  await down.arrayBuffer();

  storage = start(['storage'], ['storage.interval=1']);
  await storage.waitFor((l) => l.msg === 'ready', 60_000);
  await until('the pending list to be drained', async () => (await backend.send(['LLEN', `${prefix}storage:rec1:metadata.pending`])) === 0, 15_000);
  for (const id of [before, during]) {
    const res = await fetch(`${proxy}/storage/rec1/${id}.mp4`, { headers: auth });
    t.equal(res.status, 200, `${id === before ? 'the recording from before the kill' : 'the recording made while it was down'} is served`);
    t.ok((await res.arrayBuffer()).byteLength > 1000);
  }
  const files = readdirSync(folder).filter((f) => f.endsWith('.mp4'));
  const total = files.reduce((sum, f) => sum + readFileSync(join(folder, f)).length, 0);
  await until('disk.bytes.used to count every file', async () => Number(await backend.send(['HGET', `${prefix}metrics:storage:disk.bytes.used`, 'rec1'])) === total, 15_000);
  t.pass(`disk.bytes.used = ${total}, the folder's ${files.length} recordings`);
});

t.test('a node in its own process (nodeMode=process) finishes and announces its recording before it exits', async (t) => {
  const orchestrator = start(['orchestrator'], ['orchestrator.nodeMode=process', 'orchestrator.id=rec-proc', 'orchestrator.platformName=recproc']);
  await orchestrator.waitFor((l) => l.msg === 'ready', 60_000);
  const id = await session({ platformName: 'recproc', 'se:recordVideo': true });
  t.equal((await api(`/api/sessions/${id}`)).orchestrator, 'rec-proc', 'served by the process-mode orchestrator');
  await recordAWhile(id, orchestrator);
  const link = await until('the recording linked', async () => (await api(`/api/sessions/${id}`)).recording as string | undefined, 60_000, 200);
  const res = await fetch(proxy + link);
  t.equal(res.status, 200);
  const file = join(dir, 'process-node.mp4');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const duration = Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]).toString());
  t.ok(duration >= 0.5, `a video of ${duration} s`);
});
