// playwright-core of a given major.minor, for workers that serve clients of
// several Playwright versions (a client and its browser server must share
// major.minor). Found, in order: the bundled playwright-core; an alias
// installed next to it (`npm i playwright-core-1.62@npm:playwright-core@1.62`);
// the cache folder (`<cache>/pw-1.62/node_modules/playwright-core`); else
// installed once from the npm registry into the cache. Each step before the
// last needs no network, so a cache filled in advance works offline.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { GridError } from '../errors.ts';
import { majorMinor } from '../refs.ts';

export type PlaywrightCore = typeof import('playwright-core');

export interface Playwright {
  /** The playwright-core module. */
  core: PlaywrightCore;
  /** Its exact version ('1.62.1'). */
  version: string;
  /** Where it was found: 'bundled', 'node_modules', 'cache' or 'installed'. */
  source: string;
  /** Its package folder. */
  root: string;
}

const INSTALL_TIMEOUT_MS = 180_000;
/** What npm needs to start and print its error, on top of the registry's own bound. */
const NPM_START_MS = 15_000;
/** Plain words for the socket errors an unreachable registry gives. */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'name lookup failed',
  ETIMEDOUT: 'timed out',
  ECONNRESET: 'connection reset',
  ENETUNREACH: 'network unreachable',
  EHOSTUNREACH: 'host unreachable',
};
const loaded = new Map<string, Promise<Playwright>>();

/** The cache folder: browser-grid.playwrightCache, else $XDG_CACHE_HOME/coord/playwright, else ~/.cache/coord/playwright. */
export function playwrightCacheDir(configured: string | undefined): string {
  if (configured) return resolve(configured);
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'coord', 'playwright');
}

/** The playwright-core bundled with coord. */
export function bundledPlaywright(): Promise<Playwright> {
  return playwrightOf('', '');
}

/** playwright-core of major.minor `version` ('' for the bundled one), found or installed once per process. */
export function playwrightOf(version: string, cacheDir: string, registryTimeoutMs = 5000): Promise<Playwright> {
  let found = loaded.get(version);
  if (!found) {
    found = find(version, cacheDir, registryTimeoutMs);
    loaded.set(version, found);
    found.catch(() => loaded.delete(version)); // a failed install is tried again on the next request
  }
  return found;
}

async function find(version: string, cacheDir: string, registryTimeoutMs: number): Promise<Playwright> {
  const own = createRequire(import.meta.url);
  // imported, not required: Deno maps the bare name through deno.json
  const bundled: Playwright = { core: await import('playwright-core'), version: (own('playwright-core/package.json') as { version: string }).version, source: 'bundled', root: dirname(own.resolve('playwright-core/package.json')) };
  if (!version || majorMinor(bundled.version) === version) return bundled;
  for (const from of [own, createRequire(join(process.cwd(), 'index.js'))]) {
    const alias = tryLoad(from, `playwright-core-${version}`, 'node_modules');
    if (alias && majorMinor(alias.version) === version) return alias;
  }
  const dir = join(cacheDir, `pw-${version}`);
  const cached = tryLoad(createRequire(join(dir, 'index.js')), 'playwright-core', 'cache');
  if (cached && majorMinor(cached.version) === version) return cached;
  await install(version, cacheDir, dir, registryTimeoutMs);
  const installed = tryLoad(createRequire(join(dir, 'index.js')), 'playwright-core', 'installed');
  if (!installed || majorMinor(installed.version) !== version) {
    throw new GridError(`playwright-core@${version} installed into ${dir} reports version ${installed?.version ?? 'none'}`, { code: 'COORD_ERR_BROWSER_GRID_PLAYWRIGHT_VERSION' });
  }
  return installed;
}

function load(from: NodeJS.Require, name: string, source: string): Playwright {
  return { core: from(name) as PlaywrightCore, version: (from(`${name}/package.json`) as { version: string }).version, source, root: dirname(from.resolve(`${name}/package.json`)) };
}

function tryLoad(from: NodeJS.Require, name: string, source: string): Playwright | undefined {
  try {
    return load(from, name, source);
  } catch {
    return undefined;
  }
}

/**
 * `npm install playwright-core@<major.minor>` (the newest patch of that minor) into a
 * folder of its own, then renamed into place, so two processes installing at once
 * never see a half-written copy.
 */
async function install(version: string, cacheDir: string, dir: string, registryTimeoutMs: number): Promise<void> {
  // One look-up with no retries first: an unreachable registry (offline, refused) or a
  // version it does not have fails within registryTimeout, with npm's own cause, instead of
  // after npm's minute of retries.
  const lookup = ['view', `playwright-core@${version}`, 'version', '--fetch-retries=0', `--fetch-timeout=${registryTimeoutMs}`];
  const missing = await run('npm', lookup, registryTimeoutMs + NPM_START_MS);
  if (missing !== undefined) throw new GridError(`cannot install playwright-core@${version} from the npm registry: ${missing}`, { code: 'COORD_ERR_BROWSER_GRID_PLAYWRIGHT_INSTALL' });
  const staging = join(cacheDir, `.pw-${version}-${randomUUID()}`);
  await mkdir(staging, { recursive: true });
  try {
    const args = ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--omit=dev', `playwright-core@${version}`];
    const why = await run('npm', args, INSTALL_TIMEOUT_MS);
    if (why !== undefined || !existsSync(join(staging, 'node_modules/playwright-core/package.json'))) {
      throw new GridError(
        `cannot install playwright-core@${version} from the npm registry into ${dir}: ${why || 'npm installed nothing'} (install it there by hand, or set browser-grid.playwrightCache to a folder that has pw-${version}/node_modules/playwright-core)`,
        { code: 'COORD_ERR_BROWSER_GRID_PLAYWRIGHT_INSTALL' },
      );
    }
    await rename(staging, dir).catch((error: NodeJS.ErrnoException) => {
      // another process put it there first: theirs is as good
      if (!existsSync(join(dir, 'node_modules/playwright-core/package.json'))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
  }
}

/** Runs a command; undefined when it succeeded, else the last lines of its error output. */
function run(command: string, args: string[], timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', (error) => resolve(`${command}: ${error.message}`));
    child.once('close', (code, signal) => {
      if (code === 0) return resolve(undefined);
      resolve(npmCause(err) || `${command} exited with ${signal ?? code}${signal ? ` (after ${timeoutMs} ms)` : ''}`);
    });
  });
}

/** The cause in npm's error output: the failed request and its socket error in plain words, else npm's first error line. */
export function npmCause(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.replace(/^npm (?:error|ERR!) ?/, '').trim()).filter(Boolean);
  const code = lines.map((l) => /^code (\S+)/.exec(l)?.[1]).find(Boolean);
  const fetch = lines.map((l) => /FetchError: (.*)/.exec(l)?.[1]).find(Boolean);
  if (fetch) return `${code && CAUSES[code] ? `${CAUSES[code]}: ` : ''}${fetch}`;
  return lines.find((l) => !/^(code|errno|syscall) /.test(l) && !/^A complete log/.test(l)) ?? '';
}
