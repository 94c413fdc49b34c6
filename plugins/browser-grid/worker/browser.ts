// Launching a Playwright browser server: the system's Chromium when there is
// one (this is what Debian machines have), else Playwright's own install.
import { existsSync } from 'node:fs';
import type { BrowserServer } from 'playwright-core';
import { GridError } from '../errors.ts';
import type { PlaywrightCore } from './playwright.ts';
import type { BrowserType } from '../refs.ts';

const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The system's Chromium, when there is one. */
export function systemChromium(): string | undefined {
  return SYSTEM_CHROMIUM.find(existsSync);
}

/** Flags that keep a headless Chromium from reaching the network on its own. */
export const chromiumFlags: readonly string[] = [
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

export interface LaunchOptions {
  browserType: BrowserType;
  host: string;
  /** The port to bind (default 0: any free port). */
  port?: number;
  executablePath?: string;
  args: readonly string[];
  /** The playwright-core to launch it with (default: the bundled one). */
  playwright?: PlaywrightCore;
}

export async function launchBrowserServer(options: LaunchOptions): Promise<BrowserServer> {
  const playwright = options.playwright ?? (await import('playwright-core'));
  const type = playwright[options.browserType];
  const executablePath = options.executablePath ?? (options.browserType === 'chromium' ? systemChromium() : undefined);
  const args = options.browserType === 'chromium' ? [...chromiumFlags, ...options.args] : [...options.args];
  const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  try {
    return await type.launchServer({
      headless: true,
      host: options.host,
      port: options.port ?? 0,
      executablePath,
      args,
      chromiumSandbox: options.browserType === 'chromium' ? !runningAsRoot : undefined,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (error) {
    const first = String((error as Error).message).split('\n')[0];
    throw new GridError(
      `cannot launch ${options.browserType}${executablePath ? ` (${executablePath})` : ''}: ${first}` +
        (executablePath ? '' : ' — install Debian\'s chromium package or set browser-grid.executablePath'),
      { code: 'COORD_ERR_BROWSER_GRID_LAUNCH', cause: error },
    );
  }
}
