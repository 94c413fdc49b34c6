// The storage role's limits on real Redis, with a storage process (coord run
// --role storage) and files announced as a node announces them: past
// maxBytes the oldest recordings are deleted first and their sessions lose
// their link, recordings past maxAge go, and metrics:storage:disk.bytes.used
// follows the folder. Then the pieces: byte ranges, the limit rule, and the
// start-up error when recording is on and there is no ffmpeg.
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { parseRange } from '../plugins/webdriver/storage/serve-file.ts';
import { pastLimits } from '../plugins/webdriver/storage/files.ts';
import { jpegSize } from '../plugins/webdriver/recording/jpeg-size.ts';
import { wantsRecording } from '../plugins/webdriver/recording/settings.ts';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, type CoordProcess } from './support/cli.ts';
import { freePort, startRedis } from './support/redis.ts';
import { until } from './support/until.ts';

buildIfStale();
const redis = await startRedis();
const backend = await createBackend({ url: redis.url });
const dir = mkdtempSync(join(tmpdir(), 'coord-wd-storage-'));
const folder = join(dir, 'recordings');
const prefix = 'lim:';
const processes: CoordProcess[] = [];
t.teardown(async () => {
  for (const p of processes) p.kill('SIGKILL');
  await backend.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const used = async () => Number(await backend.send(['HGET', `${prefix}metrics:storage:disk.bytes.used`, 'lim']));
const files = () => readdirSync(folder).filter((f) => f.endsWith('.mp4')).sort();

/** What a node does once its recording is finished: the file in the folder (finished `ageSeconds` ago), then the announcement. */
async function record(n: number, bytes: number, ageSeconds: number): Promise<void> {
  const file = join(folder, `${id(n)}.mp4`);
  writeFileSync(file, Buffer.alloc(bytes, n));
  const at = (Date.now() - ageSeconds * 1000) / 1000;
  utimesSync(file, at, at);
  const now = new Date().toISOString();
  await backend.multi([
    ['SET', `${prefix}session:${id(n)}:storage`, 'lim'],
    ['LPUSH', `${prefix}storage:lim:metadata.pending`, JSON.stringify({ sessionId: id(n), file: `${id(n)}.mp4`, bytes, startedAt: now, endedAt: now })],
  ]);
}

t.test('size and age limits: oldest first, links dropped, disk.bytes.used follows', async (t) => {
  const port = await freePort();
  const storage = coord(['run', '--plugin', 'webdriver', '--role', 'storage', '--redis', redis.url, '--prefix', prefix,
    ...['storage.id=lim', `storage.folder=${folder}`, 'storage.maxBytes=3000', 'storage.maxAge=3600', 'storage.interval=1', `storage.port=${port}`].flatMap((s) => ['--set', `webdriver.${s}`])]);
  processes.push(storage);
  await storage.waitFor((l) => l.msg === 'ready', 60_000);
  t.equal(await backend.send(['GET', `${prefix}storage:lim:${String(await backend.send(['ZRANGE', `${prefix}storage:lim:providers`, 0, 0]))}:host`]), `127.0.0.1:${port}`, 'the provider registered its host');
  t.ok(Number(await backend.send(['TTL', `${prefix}storage:lim:${String(await backend.send(['ZRANGE', `${prefix}storage:lim:providers`, 0, 0]))}:host`])) <= 60, 'with its TTL (at most 60 s)');
  t.equal(Number(await backend.send(['HGET', `${prefix}metrics:storage:disk.bytes.total`, 'lim'])), 3000, 'disk.bytes.total is the size limit');

  await record(1, 1000, 400);
  await record(2, 1000, 300);
  await record(3, 1000, 200);
  await until('three recordings counted', async () => (await used()) === 3000);
  t.same(files(), [1, 2, 3].map((n) => `${id(n)}.mp4`), 'at the limit: all kept');

  await record(4, 1000, 100);
  await until('the oldest to be deleted', () => !files().includes(`${id(1)}.mp4`));
  t.same(files(), [2, 3, 4].map((n) => `${id(n)}.mp4`), 'one past the limit: the oldest went');
  t.equal(await used(), 3000, 'disk.bytes.used: 3000');
  t.equal(await backend.send(['EXISTS', `${prefix}session:${id(1)}:storage`]), 0, 'its session no longer links it');
  t.equal(await backend.send(['GET', `${prefix}session:${id(2)}:storage`]), 'lim', 'the others still do');

  await record(5, 2500, 0);
  await until('room for the large one', async () => (await used()) === 2500);
  t.same(files(), [`${id(5)}.mp4`], 'a 2500-byte recording: the three older ones went, oldest first, until it fit');
  for (const n of [2, 3, 4]) t.equal(await backend.send(['EXISTS', `${prefix}session:${id(n)}:storage`]), 0);

  await record(6, 100, 7200);
  await until('the two-hour-old recording to go', () => !files().includes(`${id(6)}.mp4`));
  t.same(files(), [`${id(5)}.mp4`], 'past maxAge (1 h): deleted, though there was room');
  t.equal(await used(), 2500);
  t.equal(await backend.send(['LLEN', `${prefix}storage:lim:metadata.pending`]), 0, 'every announcement taken');

  storage.kill('SIGTERM');
  t.equal(await storage.exited, 0, 'stops cleanly');
  t.equal(await backend.send(['ZCARD', `${prefix}storage:lim:providers`]), 0, 'and withdraws from the providers index');
});

t.test('byte ranges', async (t) => {
  t.same(parseRange(undefined, 100), 'whole');
  t.same(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  t.same(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  t.same(parseRange('bytes=90-500', 100), { start: 90, end: 99 }, 'an end past the file is the last byte');
  t.same(parseRange('bytes=-10', 100), { start: 90, end: 99 }, 'a suffix');
  t.same(parseRange('bytes=-500', 100), { start: 0, end: 99 });
  t.same(parseRange('bytes=100-', 100), 'unsatisfiable');
  t.same(parseRange('bytes=5-2', 100), 'unsatisfiable');
  t.same(parseRange('bytes=0-1,5-6', 100), 'whole', 'several ranges: the whole file');
  t.same(parseRange('items=0-1', 100), 'whole');
});

t.test('the limit rule', async (t) => {
  const now = 1_000_000_000;
  const r = (n: number, bytes: number, ageS: number) => ({ file: `${n}.mp4`, sessionId: String(n), bytes, at: now - ageS * 1000 });
  const all = [r(1, 10, 50), r(2, 10, 40), r(3, 10, 30)];
  t.same(pastLimits(all, { maxBytes: 0, maxAge: 0 }, now), [], 'no limits: nothing');
  t.same(pastLimits(all, { maxBytes: 25, maxAge: 0 }, now).map((x) => x.file), ['1.mp4'], 'oldest first until it fits');
  t.same(pastLimits(all, { maxBytes: 0, maxAge: 35 }, now).map((x) => x.file), ['1.mp4', '2.mp4'], 'older than maxAge');
});

t.test('which sessions are recorded; frame sizes', async (t) => {
  t.equal(wantsRecording({ 'se:recordVideo': true }, false), true, 'se:recordVideo');
  t.equal(wantsRecording({ 'coord:options': { recordVideo: true } }, false), true, 'coord:options.recordVideo');
  t.equal(wantsRecording({ 'se:recordVideo': false }, true), false, 'a session may refuse the grid default');
  t.equal(wantsRecording({}, true), true, 'the grid default');
  t.equal(wantsRecording({}, false), false);
  // a JPEG's header: SOI, an APP0 segment, then SOF0 with height 600, width 800 (no pixels needed)
  const sof = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x0b, 0x08, 0x02, 0x58, 0x03, 0x20, 0x01, 0x01, 0x11, 0x00]);
  t.same(jpegSize(sof), { width: 800, height: 600 }, 'the start-of-frame segment gives the size');
});

t.test('recording on and no ffmpeg: one clear line, no start', async (t) => {
  const r = coordSync(['run', '--plugin', 'webdriver', '--role', 'orchestrator', '--set', 'webdriver.recording.enabled=true', '--set', 'webdriver.recording.ffmpeg=/nonexistent/ffmpeg']);
  t.equal(r.status, 2, 'exits 2, as for any unusable config');
  const line = r.stderr.trim().split('\n');
  t.equal(line.length, 1, 'one line');
  t.match(line[0], /webdriver\.recording\.enabled is true but there is no ffmpeg at \/nonexistent\/ffmpeg: install it \(apt-get install ffmpeg\) or set webdriver\.recording\.ffmpeg/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
