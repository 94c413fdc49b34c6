// Selenium Grid's extensions, used by real selenium-webdriver from npm against
// a split grid (proxy, manager and orchestrator as separate coord processes on
// real Redis, with a token): file upload through se/file with
// remote.FileDetector, CDP through se:cdp with createCDPConnection, and managed
// downloads (se:downloadsEnabled, se/files). Bad uploads are 400, se/cdp
// without the token 401; session folders go when their session ends, and
// folders of dead processes when an orchestrator starts. The same commands
// in one process (standalone), where the proxy hands them to the node directly.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import webdriver from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';
import remote from 'selenium-webdriver/remote/index.js';
import t from 'tap';
import { sessionToken } from '../plugins/webdriver/auth.ts';
import { foldersRoot } from '../plugins/webdriver/node/session-folder.ts';
import { buildIfStale } from './support/build.ts';
import { freePort } from './support/redis.ts';
import { ready, startRig } from './support/rig.ts';
import { until } from './support/until.ts';
import WebSocket from 'ws';
import { chromeOptions, gridId, newSessionBody, startWebdriver, w3c, wsUpgrade } from './support/webdriver.ts';

buildIfStale();
const TOKEN = 'extensions-token-7';
const bearer = { authorization: `Bearer ${TOKEN}` };
const rig = await startRig(t, 'webdriver');
const dir = mkdtempSync(join(tmpdir(), 'coord-wd-ext-'));
/** The split grid's temporary directory (TMPDIR), so other grids on this machine do not touch its session folders. */
const gridTmp = join(dir, 'tmp');
const gridFolders = join(gridTmp, 'coord-webdriver-sessions');

/** The bytes the page offers as a download. */
const REPORT = `report ${Date.now()}\n${'x'.repeat(5000)}\n`;
const pagePort = await freePort();
const pageUrl = `http://127.0.0.1:${pagePort}`;
const pages = createServer((req, res) => {
  if (req.url === '/upload') {
    // shows the text of the file chosen in the input
    return res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>upload</title>
<input type="file" id="file"><pre id="out"></pre>
<script>document.getElementById('file').onchange = async (e) => { document.getElementById('out').textContent = 'read:' + await e.target.files[0].text(); };</script>`);
  }
  if (req.url === '/download') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>download</title><a id="get" href="/report">get the report</a>');
  if (req.url === '/report') return res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.txt"' }).end(REPORT);
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>coord ${req.url}</title>`);
});
await new Promise<void>((resolve) => pages.listen(pagePort, '127.0.0.1', resolve));

// a folder left by a process that died: the orchestrator removes it when it starts; one of a live process stays
const deadPid = spawnSync('true').pid!;
const leftover = join(gridFolders, `${deadPid}-00000000-0000-4000-8000-00000000dead`);
const alive = join(gridFolders, `${process.pid}-00000000-0000-4000-8000-0000000a11fe`);
for (const folder of [leftover, alive]) {
  mkdirSync(join(folder, 'downloads'), { recursive: true });
  writeFileSync(join(folder, 'downloads', 'old.txt'), 'old');
}

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const P = '{wx}:';
const role = (name: string, sets: string[] = []) => rig.run(name, { prefix: P, sets, env: { TMPDIR: gridTmp } });
const proxy = role('proxy', [`proxy.port=${port}`, `proxy.token=${TOKEN}`]);
const manager = role('manager');
const orchestrator = role('orchestrator', ['orchestrator.slots=2', 'orchestrator.id=orch-x']);
rig.atEnd(() => {
  pages.closeAllConnections();
  pages.close();
  rmSync(dir, { recursive: true, force: true });
});
await ready(proxy, manager, orchestrator);

/** A selenium-webdriver session through the grid (the token as Basic auth's password, as http://user:TOKEN@host sends it). */
async function seleniumSession(downloads = false): Promise<webdriver.WebDriver> {
  const options = new chrome.Options().setChromeBinaryPath(chromeOptions.binary).addArguments(...chromeOptions.args);
  if (downloads) options.enableDownloads();
  return new webdriver.Builder().usingServer(`http://coord:${TOKEN}@127.0.0.1:${port}`).forBrowser('chrome').setChromeOptions(options).build();
}

/** A session's folders under `root` (whatever process owns them). */
const foldersOf = (sessionId: string, root = gridFolders) => (existsSync(root) ? readdirSync(root).filter((name) => name.endsWith(`-${sessionId}`)) : []);

/** A WebSocket upgrade by hand to the proxy. */
const upgrade = (target: string) => wsUpgrade(port, target);

t.test('an orchestrator starting removes the session folders of processes that died', async (t) => {
  await until('the leftover folder is gone', () => !existsSync(leftover), 10_000);
  t.ok(orchestrator.lines.some((l) => l.msg === 'removed session folders of processes that died' && l.folders === 1), 'and says so');
  t.ok(existsSync(join(alive, 'downloads', 'old.txt')), "a live process's folder stays");
});

t.test('upload: remote.FileDetector sends the file through se/file; the page reads its bytes from the path the grid answered', async (t) => {
  const local = join(dir, 'hello-upload.txt');
  const text = `uploaded through the grid ${Date.now()}`;
  writeFileSync(local, text);
  const driver = await seleniumSession();
  const sessionId = gridId((await driver.getSession()).getId());
  try {
    driver.setFileDetector(new remote.FileDetector());
    await driver.get(`${pageUrl}/upload`);
    await driver.findElement(webdriver.By.id('file')).sendKeys(local);
    const out = driver.findElement(webdriver.By.id('out'));
    await driver.wait(async () => (await out.getText()) !== '', 20_000);
    t.equal(await out.getText(), `read:${text}`, 'the page read the uploaded bytes');
    const [folder] = foldersOf(sessionId);
    t.ok(folder, 'the file landed in the session folder on the node');
    const uploads = readdirSync(join(gridFolders, folder!, 'uploads'));
    t.equal(uploads.length, 1, 'one upload');
    t.equal(readFileSync(join(gridFolders, folder!, 'uploads', uploads[0]!, 'hello-upload.txt'), 'utf8'), text);
  } finally {
    await driver.quit();
  }
  await until('the session folder is removed when the session ends', () => foldersOf(sessionId).length === 0, 15_000);
  t.pass('session folder removed');
});

t.test('se/file answers bad uploads with 400 invalid argument and writes nothing outside the session folder', async (t) => {
  const created = await w3c(base, 'POST', '/session', newSessionBody(), bearer);
  t.equal(created.status, 200);
  const id = created.body.value!.sessionId!;
  const upload = (body: unknown) => w3c(base, 'POST', `/session/${id}/se/file`, body, bearer);
  const zip = (files: Record<string, string>) => Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, Buffer.from(v)])))).toString('base64');
  const outside = join(dir, 'escaped.txt');
  /** A small zip whose directory says its file unpacks to 600 MiB. */
  const bomb = () => {
    const bytes = Buffer.from(zipSync({ 'big.bin': new Uint8Array(1024) }));
    bytes.writeUInt32LE(600 * 1024 * 1024, bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 24);
    return bytes.toString('base64');
  };
  const cases: [string, unknown][] = [
    ['no "file"', {}],
    ['"file" not a string', { file: 12 }],
    ['not base64', { file: 'not base64 at all!' }],
    ['base64 of something that is not a zip', { file: Buffer.from('plain text, no zip').toString('base64') }],
    ['an empty zip', { file: zip({}) }],
    ['two files', { file: zip({ 'a.txt': 'a', 'b.txt': 'b' }) }],
    ['an entry going up with ..', { file: zip({ '../../../../escaped.txt': 'evil' }) }],
    ['an absolute entry', { file: zip({ [outside]: 'evil' }) }],
    ['a backslash path going up', { file: zip({ '..\\..\\escaped.txt': 'evil' }) }],
    ['a zip declaring 600 MiB unpacked', { file: bomb() }],
    ['not JSON', 'this is not json'],
  ];
  for (const [what, body] of cases) {
    const answer = await upload(body);
    t.equal(answer.status, 400, `${what}: 400`);
    t.equal(answer.body.value?.error, 'invalid argument', `${what}: invalid argument`);
    t.match(String(answer.body.value?.message), /se\/file|JSON/, `${what}: the message names se/file: ${answer.body.value?.message}`);
  }
  t.notOk(existsSync(outside), 'nothing escaped the session folder');
  t.equal((await w3c(base, 'GET', `/session/${id}/se/file`, undefined, bearer)).status, 405, 'GET se/file: unknown method');
  const good = await upload({ file: zip({ 'ok.txt': 'fine' }) });
  t.equal(good.status, 200, 'the node still serves uploads');
  t.match(String(good.body.value), /\/uploads\/upload-[^/]+\/ok\.txt$/, 'an absolute path in the session folder');
  t.equal(readFileSync(String(good.body.value), 'utf8'), 'fine');
  t.equal((await w3c(base, 'GET', `/session/${id}/title`, undefined, bearer)).status, 200, 'the session goes on');
  t.equal((await w3c(base, 'POST', `/session/${id}/se/file`, { file: zip({ 'x.txt': 'x' }) })).status, 401, 'without the token: 401');
  t.equal((await w3c(base, 'DELETE', `/session/${id}`, undefined, bearer)).status, 200);
});

t.test('CDP through the grid: se:cdp and se:cdpVersion in the capabilities; createCDPConnection runs a CDP command over the proxy', async (t) => {
  const driver = await seleniumSession();
  try {
    const sessionId = gridId((await driver.getSession()).getId());
    const caps = await driver.getCapabilities();
    t.equal(caps.get('se:cdp'), `ws://127.0.0.1:${port}/session/${sessionId}/se/cdp?token=${sessionToken(TOKEN, sessionId)}`, 'se:cdp: the grid URL with the session token');
    t.equal(caps.get('se:cdpVersion'), caps.get('browserVersion'), "se:cdpVersion: Chromium's version");
    t.match(String(caps.get('se:cdpVersion')), /^\d+\.\d+\.\d+\.\d+$/);
    await driver.get(`${pageUrl}/cdp`);
    const cdp = await driver.createCDPConnection('page');
    const evaluated = (await cdp.send('Runtime.evaluate', { expression: 'document.title = "set over cdp"; 6 * 7', returnByValue: true })) as { result?: { result?: { value?: unknown } } };
    t.equal(evaluated.result?.result?.value, 42, 'a CDP command answered through the grid');
    t.equal(await driver.getTitle(), 'set over cdp', "and it ran in the session's page");
    const version = (await cdp.send('Browser.getVersion', {})) as { result?: { product?: string } };
    t.match(String(version.result?.product), String(caps.get('se:cdpVersion')), 'the browser behind it is the session\'s Chromium');
  } finally {
    await driver.quit();
  }
});

t.test('se/cdp is refused without the token (401 and nothing else), and opened with it', async (t) => {
  const created = await w3c(base, 'POST', '/session', newSessionBody(), { ...bearer, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'grid.example.com' });
  const id = created.body.value!.sessionId!;
  t.equal(created.body.value!.capabilities!['se:cdp'], `wss://grid.example.com/session/${id}/se/cdp?token=${sessionToken(TOKEN, id)}`, 'behind a TLS load balancer se:cdp follows X-Forwarded-Proto/Host');
  const path = `/session/${id}/se/cdp`;
  for (const [what, target] of [['no token', path], ['a wrong token', `${path}?token=nope`], ['the grid token derived for another session', `${path}?token=${sessionToken(TOKEN, '00000000-0000-4000-8000-000000000000')}`]] as const) {
    const answer = await upgrade(target);
    t.equal(answer.status, 401, `${what}: 401`);
    t.notMatch(answer.text, id, `${what}: the answer names no session`);
    t.equal((JSON.parse(answer.text) as { value: { error: string } }).value.error, 'unauthorized');
  }
  t.equal((await upgrade(`${path}?token=${sessionToken(TOKEN, id)}`)).status, 101, 'the session token opens it');
  t.equal((await upgrade(`${path}?token=${TOKEN}`)).status, 101, 'so does the grid token');
  t.equal((await w3c(base, 'DELETE', `/session/${id}`, undefined, bearer)).status, 200);
  t.equal((await upgrade(`${path}?token=${TOKEN}`)).status, 404, 'an ended session has no CDP endpoint');
});

t.test('managed downloads: se:downloadsEnabled, the page downloads a file, the client lists, fetches and deletes it', async (t) => {
  const driver = await seleniumSession(true);
  const sessionId = gridId((await driver.getSession()).getId());
  try {
    t.equal((await driver.getCapabilities()).get('se:downloadsEnabled'), true, 'the capabilities say downloads are managed');
    t.same(await driver.getDownloadableFiles(), [], 'nothing downloaded yet');
    await driver.get(`${pageUrl}/download`);
    await driver.findElement(webdriver.By.id('get')).click();
    const names = await until('the download is listed', async () => {
      const listed = (await driver.getDownloadableFiles()) as string[];
      return listed.includes('report.txt') && listed;
    }, 30_000, 200);
    t.same(names, ['report.txt'], 'GET se/files lists the downloaded file (and no partial one)');

    // what Chromium leaves while a download runs: its hidden temporary file, then NAME.crdownload
    const downloads = join(gridFolders, foldersOf(sessionId)[0]!, 'downloads');
    writeFileSync(join(downloads, '.org.chromium.Chromium.aB3xYz'), '');
    writeFileSync(join(downloads, 'big.zip.crdownload'), 'partial');
    const before = Date.now();
    const listed = await w3c(base, 'GET', `/session/${sessionId}/se/files`, undefined, bearer);
    t.same(listed.body.value?.names, ['report.txt'], "neither Chromium's temporary file nor a .crdownload is listed");
    const files = listed.body.value?.files as { name: string; size: number; creationTime: number; lastModifiedTime: number }[];
    t.same(files.map((f) => [f.name, f.size]), [['report.txt', Buffer.byteLength(REPORT)]], "Selenium 4.39+'s files: name and size in bytes");
    t.same(Object.keys(files[0]!).sort(), ['creationTime', 'lastModifiedTime', 'name', 'size'], 'the fields of Selenium\'s DownloadedFile');
    t.ok(files.every((f) => f.lastModifiedTime > before - 120_000 && f.lastModifiedTime <= before + 1000 && f.creationTime > before - 120_000 && f.creationTime <= before + 1000), 'times in milliseconds since the epoch, from the last minutes');
    const [partial, temporary] = ['big.zip.crdownload', '.org.chromium.Chromium.aB3xYz'].map((name) => w3c(base, 'POST', `/session/${sessionId}/se/files`, { name }, bearer));
    t.equal((await partial).status, 400, 'a partial download cannot be fetched');
    t.equal((await temporary).status, 400, "nor Chromium's temporary file");

    const fetched = await w3c(base, 'POST', `/session/${sessionId}/se/files`, { name: 'report.txt' }, bearer);
    t.equal(fetched.status, 200);
    t.equal(fetched.body.value?.filename, 'report.txt', 'Selenium Grid\'s shape: filename');
    const unzipped = unzipSync(Buffer.from(String(fetched.body.value?.contents), 'base64'));
    t.same(Object.keys(unzipped), ['report.txt'], 'contents: a zip holding the file');
    t.equal(Buffer.from(unzipped['report.txt']!).toString(), REPORT, 'with the bytes the page served');

    const target = join(dir, 'fetched');
    await driver.downloadFile('report.txt', target);
    await until('selenium-webdriver unpacked the file', () => existsSync(join(target, 'report.txt')) && readFileSync(join(target, 'report.txt'), 'utf8') === REPORT, 10_000);
    t.pass('driver.downloadFile wrote the downloaded bytes');

    const missing = await w3c(base, 'POST', `/session/${sessionId}/se/files`, { name: '../../etc/passwd' }, bearer);
    t.equal(missing.status, 400, 'a name that is no downloaded file: 400');
    t.equal((await w3c(base, 'POST', `/session/${sessionId}/se/files`, {}, bearer)).status, 400, 'no name: 400');

    await driver.deleteDownloadableFiles();
    t.same(await driver.getDownloadableFiles(), [], 'DELETE se/files empties the folder');
  } finally {
    await driver.quit();
  }
  await until('the session folder is removed when the session ends', () => foldersOf(sessionId).length === 0, 15_000);
  t.pass('session folder removed');
});

t.test("Selenium's Session Event API: fireSessionEvent is answered as Selenium Grid answers it and kept in the session's log", async (t) => {
  const driver = await seleniumSession();
  const sessionId = gridId((await driver.getSession()).getId());
  try {
    const before = Date.now();
    const started = (await driver.fireSessionEvent('test:started')) as { success: boolean; eventType: string; timestamp: string };
    t.same([started.success, started.eventType], [true, 'test:started'], 'fireSessionEvent: success and the event type');
    t.ok(Date.parse(started.timestamp) >= before - 1000 && Date.parse(started.timestamp) <= Date.now() + 1000, `with when it was kept: ${started.timestamp}`);
    await driver.fireSessionEvent('test:failed', { testName: 'LoginTest', error: 'Element not found' });

    const log = (await rig.backend.send(['XRANGE', `${P}session:${sessionId}:log`, '-', '+'])) as [string, string[]][];
    const events = log.map(([, flat]) => Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]]])))).filter((e) => e.code === 'EVENT');
    t.same(events.map((e) => [e.component, e.level, JSON.parse(e.meta)]), [
      ['node', 'info', { eventType: 'test:started', payload: null }],
      ['node', 'info', { eventType: 'test:failed', payload: { testName: 'LoginTest', error: 'Element not found' } }],
    ], "both are EVENT entries of the session's log stream, payload and all (no offset: it is not recorded)");

    const answer = await fetch(`${base}/graphql`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ session(id: "${sessionId}") { events { eventType payload offset time } } }` }) });
    const listed = ((await answer.json()) as { data: { session: { events: { eventType: string; payload: string; offset: number | null; time: string }[] } } }).data.session.events;
    t.same(listed.map((e) => [e.eventType, JSON.parse(e.payload), e.offset]), [['test:started', null, null], ['test:failed', { testName: 'LoginTest', error: 'Element not found' }, null]], 'GraphQL Session.events lists them');
    t.ok(Math.abs(Date.parse(listed[0]!.time) - Date.parse(started.timestamp)) < 5000, 'at about the time it was answered with');

    for (const [what, body, status] of [
      ['no eventType', {}, 400],
      ['an empty eventType', { eventType: ' ' }, 400],
      ['a payload that is no object', { eventType: 'x', payload: [1, 2] }, 400],
      ['an eventType of 201 characters', { eventType: 'x'.repeat(201) }, 400],
      ['a payload over 8 KiB', { eventType: 'x', payload: { big: 'y'.repeat(9000) } }, 400],
    ] as const) {
      const refused = await w3c(base, 'POST', `/session/${sessionId}/se/event`, body, bearer);
      t.same([refused.status, refused.body.value?.error], [status, 'invalid argument'], `${what}: 400 invalid argument`);
    }
    t.equal((await w3c(base, 'GET', `/session/${sessionId}/se/event`, undefined, bearer)).status, 405, 'GET se/event: 405');
    t.equal((await rig.backend.send(['XLEN', `${P}session:${sessionId}:log`])) as number, log.length, 'a refused event is not kept');
    t.equal(await driver.getTitle(), '', 'the session goes on');
  } finally {
    await driver.quit();
  }
});

t.test('a session without se:downloadsEnabled has no managed downloads', async (t) => {
  const created = await w3c(base, 'POST', '/session', newSessionBody(), bearer);
  const id = created.body.value!.sessionId!;
  t.notOk('se:downloadsEnabled' in created.body.value!.capabilities!, 'not announced');
  const listed = await w3c(base, 'GET', `/session/${id}/se/files`, undefined, bearer);
  t.equal(listed.status, 500, 'se/files: an error, as Selenium Grid answers');
  t.match(String(listed.body.value?.message), /se:downloadsEnabled/, 'naming the capability to ask for');
  t.equal((await w3c(base, 'DELETE', `/session/${id}`, undefined, bearer)).status, 200);
});

t.test('standalone (every role in one process): the same extensions, handed from the proxy to the node without a socket', async (t) => {
  const standalonePort = await freePort();
  const grid = await startWebdriver({ redis: 'embedded://extensions', options: { proxy: { port: standalonePort }, api: { port: 0 }, orchestrator: { slots: 1 } } });
  t.teardown(() => grid.handle.stop('test done'));
  const at = `http://127.0.0.1:${standalonePort}`;
  const created = await w3c(at, 'POST', '/session', newSessionBody({ 'se:downloadsEnabled': true }));
  t.equal(created.status, 200);
  const id = created.body.value!.sessionId!;
  const caps = created.body.value!.capabilities!;
  t.equal(caps['se:downloadsEnabled'], true);
  t.equal(caps['se:cdp'], `ws://127.0.0.1:${standalonePort}/session/${id}/se/cdp`, 'se:cdp without a token: the grid has none');

  const upload = await w3c(at, 'POST', `/session/${id}/se/file`, { file: Buffer.from(zipSync({ 'one.txt': Buffer.from('one') })).toString('base64') });
  t.equal(upload.status, 200);
  t.equal(readFileSync(String(upload.body.value), 'utf8'), 'one', 'uploaded');
  t.equal((await w3c(at, 'POST', `/session/${id}/se/file`, { file: '%%%' })).body.value?.error, 'invalid argument', 'a bad upload: invalid argument');
  t.same((await w3c(at, 'GET', `/session/${id}/se/files`)).body.value, { names: [], files: [] }, 'se/files lists the (empty) downloads folder');
  t.same((await w3c(at, 'POST', `/session/${id}/se/event`, { eventType: 'step:one' })).body.value?.eventType, 'step:one', 'se/event is answered');

  const socket = new WebSocket(String(caps['se:cdp']));
  const answer = await new Promise<{ id: number; result?: { product?: string } }>((resolve, reject) => {
    socket.once('open', () => socket.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' })));
    socket.once('message', (data) => resolve(JSON.parse(data.toString())));
    socket.once('error', reject);
  });
  socket.close();
  t.equal(answer.id, 1);
  t.match(String(answer.result?.product), String(caps['se:cdpVersion']), "a CDP command answered by the session's Chromium");
  t.equal((await w3c(at, 'DELETE', `/session/${id}`)).status, 200);
  await until('the session folder is removed', () => foldersOf(id, foldersRoot()).length === 0, 15_000);
});
