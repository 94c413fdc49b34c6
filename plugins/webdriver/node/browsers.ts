// What a local orchestrator offers: the browser found on this machine, as
// WebGrid spells it (browserName::browserVersion), its version read from the binary.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { WebDriverError } from '../errors.ts';

/** 'chrome::156.0.8078.108' for the Chromium or Chrome binary given. */
export function browserEntry(binary: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['--version'], { timeout: 15_000 }, (error, stdout) => {
      const version = /(\d+\.\d+\.\d+\.\d+)/.exec(String(stdout))?.[1];
      if (version) return resolve(`chrome::${version}`);
      reject(new WebDriverError(`cannot read the browser version from "${binary} --version"${error ? `: ${error.message.split('\n')[0]}` : `: it printed ${JSON.stringify(String(stdout).trim())}`}; set webdriver.orchestrator.browserBinary`, { code: 'COORD_ERR_WEBDRIVER_BROWSER_VERSION' }));
    });
  });
}

/** A stable orchestrator ID for this machine (a name-based UUID of the host name), so a restart finds its backlog again. */
export function machineOrchestratorId(): string {
  const hex = createHash('sha1').update(`coord-webdriver-orchestrator:${hostname()}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
