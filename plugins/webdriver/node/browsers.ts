// What a local orchestrator offers: each browser it serves, as WebGrid spells
// it (browserName::browserVersion), its version read from the binary.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { WebDriverError } from '../errors.ts';
import { outputOnDisplay } from './display.ts';
import type { Engine } from './engines.ts';

/**
 * How long a browser's `--version` may take. It prints in 0.3 s on a quiet machine, but firefox-esr
 * took over 15 s once in CI, with browsers of other tests starting on both cores: an orchestrator
 * that gave up there would not start at all.
 */
const VERSION_TIMEOUT_MS = 60_000;

/** 'chrome::156.0.8078.108', 'MiniBrowser::2.50.6': the engine's browserName and the version its browser binary prints. */
export async function browserEntry(engine: Engine, xvfb: string): Promise<string> {
  const printed = engine.needsDisplay
    ? await outputOnDisplay(xvfb, engine.browserBinary, ['--version'], VERSION_TIMEOUT_MS)
    : await new Promise<string>((resolve, reject) => {
        execFile(engine.browserBinary, ['--version'], { timeout: VERSION_TIMEOUT_MS }, (error, stdout) => (error && !stdout ? reject(error) : resolve(String(stdout))));
      }).catch((error: Error) => `(${error.message.split('\n')[0]})`);
  const version = engine.versionPattern.exec(printed)?.[1];
  if (version) return `${engine.browserName}::${version}`;
  const setting = engine.name === 'chrome' ? 'webdriver.orchestrator.browserBinary' : `webdriver.orchestrator.${engine.name}.browserBinary`;
  throw new WebDriverError(`cannot read the browser version from "${engine.browserBinary} --version": it printed ${JSON.stringify(printed.trim().slice(0, 200))}; set ${setting}`, { code: 'COORD_ERR_WEBDRIVER_BROWSER_VERSION' });
}

/** A stable orchestrator ID for this machine (a name-based UUID of the host name), so a restart finds its backlog again. */
export function machineOrchestratorId(): string {
  const hex = createHash('sha1').update(`coord-webdriver-orchestrator:${hostname()}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
