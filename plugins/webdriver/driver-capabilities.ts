// What the node asks chromedriver for: the set the manager matched, less what
// only the grid looks at (browserVersion and platformName were matched against
// the orchestrator; other vendors' extensions mean nothing to chromedriver),
// with the machine's Chromium and default flags filled in where the client
// gave none.
import type { Capabilities } from './w3c.ts';

export interface BrowserDefaults {
  binary: string;
  args: readonly string[];
}

export function driverCapabilities(matched: Capabilities, defaults: BrowserDefaults): Capabilities {
  const caps: Capabilities = {};
  for (const [name, value] of Object.entries(matched)) {
    if (name === 'browserVersion' || name === 'platformName') continue;
    if (name.includes(':') && !name.startsWith('goog:')) continue;
    caps[name] = value;
  }
  const given = (caps['goog:chromeOptions'] ?? {}) as { binary?: string; args?: unknown };
  const args = Array.isArray(given.args) ? given.args.map(String) : [];
  const flag = (arg: string) => arg.split('=')[0];
  const present = new Set(args.map(flag));
  caps['goog:chromeOptions'] = {
    ...given,
    binary: given.binary ?? defaults.binary,
    args: [...args, ...defaults.args.filter((arg) => !present.has(flag(arg)))],
  };
  return caps;
}
