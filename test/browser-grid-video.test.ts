// Videos and traces from the grid: @playwright/test with video: 'on' and
// trace: 'on' runs three tests against a worker in its own process (real
// Chromium, real Redis) whose playwrightCache holds no ffmpeg and whose user
// has no Playwright ffmpeg build: the worker gives Playwright the system's
// ffmpeg. Every video must decode with ffmpeg (the whole stream, not just its
// header), every trace zip must hold a parsable trace with the test's actions,
// and video.saveAs() on a remote context gives a playable file.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import yauzl from 'yauzl';
import { root } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { ready, startPageRig } from './support/rig.ts';

const rig = await startPageRig(t, 'browser-grid');
const cache = mkdtempSync(join(tmpdir(), 'coord-video-cache-'));
const home = mkdtempSync(join(tmpdir(), 'coord-video-home-')); // the worker's user: no ~/.cache/ms-playwright at all
// the test project sits in the repository so its spec files resolve @playwright/test from node_modules
const project = join(root, 'test/.probe', `video-${process.pid}`);
rig.atEnd(() => {
  for (const dir of [cache, home, project]) rmSync(dir, { recursive: true, force: true });
});

const prefix = '{video}:';
const port = await freePort();
const sets = ['heartbeatInterval=1', 'redisKeyTtl=20', 'staleThreshold=15', 'reaperRunInterval=30', 'cdp=false', 'workers=1', `playwrightCache=${cache}`];
const env = { HOME: home, XDG_CACHE_HOME: join(home, '.cache') };
const worker = rig.run('worker', { prefix, sets, env });
const proxy = rig.run('proxy', { prefix, sets: [...sets, `port=${port}`] });
await ready(worker, proxy);

/** ffprobe's codec and decoded frame count, and whether ffmpeg decodes the whole file without an error. */
function probe(file: string): { codec: string; frames: number; decodes: boolean; errors: string } {
  const p = spawnSync('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,nb_read_frames', '-of', 'json', file], { encoding: 'utf8' });
  const stream = (JSON.parse(p.stdout || '{}') as { streams?: { codec_name: string; nb_read_frames: string }[] }).streams?.[0];
  const d = spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-'], { encoding: 'utf8' });
  return { codec: stream?.codec_name ?? '', frames: Number(stream?.nb_read_frames ?? 0), decodes: d.status === 0 && d.stderr.trim() === '', errors: p.stderr + d.stderr };
}

/** The entries of a zip and the text of those named in `read`. */
function unzip(file: string, read: (name: string) => boolean): Promise<{ names: string[]; texts: Map<string, string> }> {
  return new Promise((resolve, reject) => {
    const names: string[] = [];
    const texts = new Map<string, string>();
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        if (!read(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (err, stream) => {
          if (err) return reject(err);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            texts.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve({ names, texts }));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

t.test('the worker says at start which ffmpeg its browser servers encode with', async (t) => {
  const line = worker.lines.find((l) => String(l.msg).startsWith('video recording'));
  t.equal(line?.msg, "video recording: Playwright's browser servers encode with the system's ffmpeg");
  t.match(String(line?.ffmpeg), /\/ffmpeg$/);
  t.equal(line?.browsersPath, join(cache, 'browsers'));
  t.notOk(existsSync(join(home, '.cache/ms-playwright')), "the user's Playwright folder is not created");
});

t.test("@playwright/test with video: 'on' and trace: 'on' through the grid: every video decodes, every trace opens, saveAs gives a playable file", async (t) => {
  mkdirSync(join(project, 'tests'), { recursive: true });
  writeFileSync(
    join(project, 'playwright.config.mjs'),
    `export default {
  testDir: './tests',
  outputDir: './results',
  workers: 1,
  retries: 0,
  timeout: 120000,
  reporter: [['json', { outputFile: 'report.json' }]],
  use: { video: 'on', trace: 'on', connectOptions: { wsEndpoint: 'ws://127.0.0.1:${port}/?browser=chromium', timeout: 60000 } },
};
`,
  );
  writeFileSync(
    join(project, 'tests/grid.spec.mjs'),
    `import { test, expect } from '@playwright/test';
const url = ${JSON.stringify(rig.page.url)};
test('opens a page', async ({ page }) => {
  await page.goto(url + '/one');
  await expect(page).toHaveTitle('coord /one');
  await page.waitForTimeout(500);
});
test('clicks and types', async ({ page }) => {
  await page.goto(url + '/two');
  await page.setContent('<input id="q"><button onclick="document.title=document.getElementById(\\'q\\').value">go</button>');
  await page.fill('#q', 'typed');
  await page.click('button');
  await expect(page).toHaveTitle('typed');
});
test('saves its own context\\'s video with saveAs', async ({ page: fixture, browser }, testInfo) => {
  await fixture.goto(url + '/fixture');
  const context = await browser.newContext({ recordVideo: { dir: testInfo.outputPath('own') } });
  const page = await context.newPage();
  await page.goto(url + '/three');
  await page.waitForTimeout(500);
  await context.close();
  await page.video().saveAs(testInfo.outputPath('saved.webm'));
});
`,
  );
  const cli = join(root, 'node_modules/@playwright/test/cli.js');
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [cli, 'test', '--config', 'playwright.config.mjs'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (out += c));
    child.on('close', (code) => resolve({ code, out }));
  });
  t.equal(run.code, 0, `the test run passes${run.code ? `: ${run.out.slice(-2000)}` : ''}`);
  type Result = { status: string; attachments: { name: string; path?: string }[] };
  type Spec = { title: string; tests: { results: Result[] }[] };
  const report = (await import(join(project, 'report.json'), { with: { type: 'json' } })).default as { suites: { specs: Spec[] }[] };
  const specs = report.suites.flatMap((s) => s.specs);
  t.equal(specs.length, 3, 'three tests ran');
  for (const spec of specs) {
    const result = spec.tests[0]!.results[0]!;
    t.equal(result.status, 'passed', `${spec.title}: passed`);
    const videos = result.attachments.filter((a) => a.name === 'video');
    t.ok(videos.length >= 1, `${spec.title}: a video is attached`);
    for (const video of videos) {
      const p = probe(video.path!);
      t.ok(p.codec === 'vp8' || p.codec === 'vp9', `${spec.title}: the video is WebM video (${p.codec})`);
      t.ok(p.frames > 0, `${spec.title}: ${p.frames} frames decoded`);
      t.ok(p.decodes, `${spec.title}: ffmpeg decodes the whole video${p.errors ? `: ${p.errors}` : ''}`);
    }
    const trace = result.attachments.find((a) => a.name === 'trace');
    t.ok(trace?.path && statSync(trace.path).size > 0, `${spec.title}: a trace is attached`);
    const { names, texts } = await unzip(trace!.path!, (name) => name.endsWith('.trace'));
    t.ok(names.includes('test.trace'), `${spec.title}: the trace has the test runner's steps`);
    const browserTraces = [...texts.keys()].filter((name) => name !== 'test.trace');
    t.ok(browserTraces.length >= 1, `${spec.title}: the trace has the browser's actions`);
    const events = browserTraces.flatMap((name) => texts.get(name)!.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; method?: string }));
    t.ok(events.some((e) => e.type === 'context-options'), `${spec.title}: the trace opens with its context`);
    t.ok(events.some((e) => e.type === 'before' && e.method === 'goto'), `${spec.title}: the trace holds the page.goto`);
  }
  const saved = join(project, 'results', readdirSync(join(project, 'results')).find((d) => d.includes('saves-its-own'))!, 'saved.webm');
  const p = probe(saved);
  t.ok(p.frames > 0 && p.decodes, `saveAs wrote a playable file (${p.codec}, ${p.frames} frames)`);
});
