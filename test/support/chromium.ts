// Chromium as the tests launch it: the system's binary with the grid's own
// flags (plugins/browser-grid/browser.ts), and no sandbox (tests run as root).
import { chromiumFlags, systemChromium } from '../../plugins/browser-grid/worker/browser.ts';

export const chromiumBinary = systemChromium() ?? '/usr/bin/chromium';

export const chromiumArgs: readonly string[] = ['--no-sandbox', ...chromiumFlags];

/** Options for Playwright's chromium.launch(). */
export const launchOptions = { executablePath: chromiumBinary, args: [...chromiumArgs] };
