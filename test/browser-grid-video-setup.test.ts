// How a worker gives each playwright-core the ffmpeg it looks for
// (plugins/browser-grid/video.ts), on folders made for the test: the user's
// Playwright folder is only read, its browsers and its own ffmpeg builds still
// serve, a missing ffmpeg is said once at start. The browser-grid-video test
// records real videos through the grid.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { findExecutable } from '../core/executable.ts';
import { memoryLogger } from '../core/logger.ts';
import type { Playwright } from '../plugins/browser-grid/worker/playwright.ts';
import { prepareVideo } from '../plugins/browser-grid/worker/video.ts';

const base = mkdtempSync(join(tmpdir(), 'coord-video-setup-'));
t.teardown(() => rmSync(base, { recursive: true, force: true }));
const systemFfmpeg = findExecutable('ffmpeg');
const original = process.env.PLAYWRIGHT_BROWSERS_PATH;
t.teardown(() => (original === undefined ? delete process.env.PLAYWRIGHT_BROWSERS_PATH : (process.env.PLAYWRIGHT_BROWSERS_PATH = original)));

/** A playwright-core package folder whose browsers.json names ffmpeg `revision` (the registry part is not loaded). */
function fakePlaywright(version: string, revision: string): Playwright {
  const root = join(base, `pw-${version}`);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'browsers.json'), JSON.stringify({ browsers: [{ name: 'chromium', revision: '1200' }, { name: 'ffmpeg', revision }] }));
  const core = { chromium: { executablePath: () => join(process.env.PLAYWRIGHT_BROWSERS_PATH!, 'chromium-1200', 'chrome') } };
  return { core: core as unknown as Playwright['core'], version, source: 'cache', root };
}

t.test('no ffmpeg: one warning at start that names the fix; PLAYWRIGHT_BROWSERS_PATH is left alone', async (t) => {
  delete process.env.PLAYWRIGHT_BROWSERS_PATH;
  const logger = memoryLogger();
  const video = prepareVideo(join(base, 'no/ffmpeg'), join(base, 'cache-none'), logger);
  t.same(logger.lines.map((l) => l.level), ['warn']);
  t.equal(
    logger.lines[0]!.msg,
    `video recording is off: there is no ffmpeg at ${join(base, 'no/ffmpeg')} (install it: apt-get install ffmpeg, or set browser-grid.ffmpeg to its path); clients that record video (newContext({ recordVideo }), @playwright/test's video: 'on') get Playwright's "Executable doesn't exist" error`,
  );
  t.equal(process.env.PLAYWRIGHT_BROWSERS_PATH, undefined);
  video.provide(fakePlaywright('1.65', '1013'));
  t.notOk(existsSync(join(base, 'cache-none')), 'nothing written');
});

t.test("each version's ffmpeg revision gets the system's ffmpeg; the user's browsers and own ffmpeg build still serve; their folder is not written", async (t) => {
  t.ok(systemFfmpeg, 'ffmpeg is installed (scripts/install-deps.sh test)');
  const users = join(base, 'users-playwright');
  mkdirSync(join(users, 'chromium-1200'), { recursive: true });
  mkdirSync(join(users, 'ffmpeg-1011'), { recursive: true });
  writeFileSync(join(users, 'ffmpeg-1011', 'ffmpeg-linux'), '#!/bin/sh\n', { mode: 0o755 });
  process.env.PLAYWRIGHT_BROWSERS_PATH = users;
  const cache = join(base, 'cache');
  const logger = memoryLogger();
  const video = prepareVideo('ffmpeg', cache, logger);
  const dir = join(cache, 'browsers');
  t.equal(process.env.PLAYWRIGHT_BROWSERS_PATH, dir, 'playwright-core loaded from now on looks in coord\'s folder');
  t.match(logger.lines[0], { level: 'info', fields: { ffmpeg: systemFfmpeg, browsersPath: dir, playwrightBrowsers: users } });
  t.equal(readlinkSync(join(dir, 'chromium-1200')), join(users, 'chromium-1200'), "the user's Chromium is linked");

  video.provide(fakePlaywright('1.65', '1013'));
  video.provide(fakePlaywright('1.50', '1011'));
  t.equal(realpathSync(join(dir, 'ffmpeg-1013', 'ffmpeg-linux')), realpathSync(systemFfmpeg!), "1.65's revision: the system's ffmpeg");
  t.equal(realpathSync(join(dir, 'ffmpeg-1011', 'ffmpeg-linux')), join(users, 'ffmpeg-1011', 'ffmpeg-linux'), "1.50's revision: the user's own build");
  t.same(readdirSync(users).sort(), ['chromium-1200', 'ffmpeg-1011'], "the user's folder is unchanged");
  t.equal(logger.lines.filter((l) => l.level === 'warn').length, 0);

  // the user installs Playwright's build of 1013 later: the next start links theirs in place of ours
  mkdirSync(join(users, 'ffmpeg-1013'));
  writeFileSync(join(users, 'ffmpeg-1013', 'ffmpeg-linux'), '#!/bin/sh\n', { mode: 0o755 });
  rmSync(join(users, 'chromium-1200'), { recursive: true });
  prepareVideo('ffmpeg', cache, memoryLogger()).provide(fakePlaywright('1.65', '1013'));
  t.ok(lstatSync(join(dir, 'ffmpeg-1013')).isSymbolicLink(), "ffmpeg-1013 is now the user's");
  t.notOk(existsSync(join(dir, 'chromium-1200')) || lstatSync(join(dir, 'chromium-1200'), { throwIfNoEntry: false }), 'the link to a removed browser is gone');
});

t.test('a playwright-core loaded before the worker set the folder is named in a warning', async (t) => {
  const logger = memoryLogger();
  const video = prepareVideo('ffmpeg', join(base, 'cache'), logger);
  const early = fakePlaywright('1.62', '1013');
  early.core = { chromium: { executablePath: () => '/root/.cache/ms-playwright/chromium-1200/chrome' } } as unknown as Playwright['core'];
  video.provide(early);
  t.match(logger.lines.find((l) => l.level === 'warn'), { msg: /loaded before the worker pointed it at its browsers folder/, fields: { version: '1.62' } });
});
