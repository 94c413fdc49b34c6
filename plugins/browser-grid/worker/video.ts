// Video recording on a worker's browser servers. A client's
// newContext({ recordVideo }) (what @playwright/test's video: 'on' does) is
// encoded by the browser server with Playwright's own ffmpeg build, looked up
// at <registry>/ffmpeg-<revision>/ffmpeg-linux: <registry> is
// PLAYWRIGHT_BROWSERS_PATH as it was when that playwright-core was loaded
// (else ~/.cache/ms-playwright), <revision> comes from that version's
// browsers.json. The build is fetched by `playwright install ffmpeg`, which a
// locked-down host cannot run. So before it loads any playwright-core, a
// worker points PLAYWRIGHT_BROWSERS_PATH at a folder of coord's own
// (<playwrightCache>/browsers) that links every entry of the user's Playwright
// folder (their browsers, and their ffmpeg builds where present, still serve)
// and, for each revision a loaded version wants and the user's folder lacks,
// holds ffmpeg-<revision>/ffmpeg-linux: a link to the system's ffmpeg, which
// takes the same arguments (VP8/VP9 from a pipe into WebM). The user's folder
// is only read.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { findExecutable, type Logger } from '../../../entries/plugin.ts';
import type { Playwright } from './playwright.ts';

/** The name Playwright's registry gives its ffmpeg build, per platform. */
const FFMPEG_NAME: Partial<Record<NodeJS.Platform, string>> = { linux: 'ffmpeg-linux', darwin: 'ffmpeg-mac' };

export interface VideoSupport {
  /** Gives playwright-core `playwright` the ffmpeg it looks for (once per copy). */
  provide(playwright: Playwright): void;
}

/** Playwright's own browsers folder when PLAYWRIGHT_BROWSERS_PATH is unset (its registry's rule). */
function defaultRegistry(): string {
  const cache = process.platform === 'darwin' ? join(homedir(), 'Library', 'Caches') : process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'ms-playwright');
}

/** The user's folder, remembered the first time: a worker started again in this process finds the variable already pointing at coord's. */
let usersRegistry: string | undefined;

/**
 * Finds the system's ffmpeg (`configured`: a path, or a name looked up on PATH) and points this
 * process's playwright-core copies at coord's browsers folder. Call before any playwright-core is loaded.
 */
export function prepareVideo(configured: string, cacheDir: string, logger: Logger): VideoSupport {
  const ffmpeg = findExecutable(configured);
  const name = FFMPEG_NAME[process.platform];
  const asked = process.env.PLAYWRIGHT_BROWSERS_PATH;
  const off = (why: string): VideoSupport => {
    logger.warn(`video recording is off: ${why}; clients that record video (newContext({ recordVideo }), @playwright/test's video: 'on') get Playwright's "Executable doesn't exist" error`);
    return { provide() {} };
  };
  if (!ffmpeg) {
    const where = configured.includes('/') ? `at ${configured}` : `named "${configured}" on PATH`;
    return off(`there is no ffmpeg ${where} (install it: apt-get install ffmpeg, or set browser-grid.ffmpeg to its path)`);
  }
  if (!name) return off(`coord cannot give Playwright an ffmpeg on ${process.platform}`);
  if (asked === '0') return off('PLAYWRIGHT_BROWSERS_PATH=0 keeps each playwright-core\'s browsers inside its package, where coord does not write');
  const dir = join(cacheDir, 'browsers');
  usersRegistry ??= asked && resolve(asked) !== dir ? resolve(asked) : defaultRegistry();
  mirror(usersRegistry, dir);
  process.env.PLAYWRIGHT_BROWSERS_PATH = dir;
  logger.info('video recording: Playwright\'s browser servers encode with the system\'s ffmpeg', { ffmpeg, browsersPath: dir, playwrightBrowsers: usersRegistry });

  const provided = new Set<string>();
  return {
    provide(playwright) {
      if (provided.has(playwright.root)) return;
      provided.add(playwright.root);
      const revision = ffmpegRevision(playwright.root);
      if (!revision) return logger.warn('video recording: this playwright-core names no ffmpeg build in its browsers.json', { version: playwright.version, root: playwright.root });
      const encoder = join(dir, `ffmpeg-${revision}`, name);
      if (!existsSync(encoder)) linkAtomically(ffmpeg, encoder);
      if (!registryOf(playwright).startsWith(dir + sep)) {
        // loaded before the variable was set (e.g. by the program embedding the worker): it looks in the user's folder
        logger.warn('video recording: this playwright-core was loaded before the worker pointed it at its browsers folder; its videos need ffmpeg where Playwright installs it', { version: playwright.version, expected: join(usersRegistry!, `ffmpeg-${revision}`, name) });
      }
    },
  };
}

/** Where a loaded playwright-core looks for browsers: its Chromium's expected path lies inside that folder. */
function registryOf(playwright: Playwright): string {
  try {
    return playwright.core.chromium.executablePath();
  } catch {
    return '';
  }
}

/** The ffmpeg revision in a playwright-core's browsers.json. */
function ffmpegRevision(root: string): string | undefined {
  try {
    const { browsers } = JSON.parse(readFileSync(join(root, 'browsers.json'), 'utf8')) as { browsers: { name: string; revision: string }[] };
    return browsers.find((b) => b.name === 'ffmpeg')?.revision;
  } catch {
    return undefined;
  }
}

/** Makes `dir` link each entry of `source`: an entry of ours of the same name gives way, links to entries gone are removed. */
function mirror(source: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const theirs = existsSync(source) ? readdirSync(source).filter((entry) => entry !== '__dirlock') : [];
  for (const entry of theirs) {
    const link = join(dir, entry);
    const stat = lstatSync(link, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) continue;
    if (stat) rmSync(link, { recursive: true, force: true }); // our ffmpeg link folder: the user has since installed Playwright's build
    linkAtomically(join(source, entry), link);
  }
  for (const entry of readdirSync(dir)) {
    const link = join(dir, entry);
    if (lstatSync(link).isSymbolicLink() && !existsSync(link)) rmSync(link, { force: true });
  }
}

/** A symlink at `link` to `target`, made under another name and renamed into place: two workers doing it at once both succeed. */
function linkAtomically(target: string, link: string): void {
  mkdirSync(join(link, '..'), { recursive: true });
  const staging = `${link}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  symlinkSync(target, staging);
  try {
    renameSync(staging, link);
  } catch (error) {
    rmSync(staging, { force: true });
    if (!existsSync(link)) throw error;
  }
}
