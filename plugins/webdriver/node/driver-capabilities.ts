// What the node asks chromedriver for: the set the manager matched, less what
// only the grid looks at (browserVersion and platformName were matched against
// the orchestrator; other vendors' extensions mean nothing to chromedriver),
// with the machine's Chromium and default flags filled in where the client
// gave none.
import type { Capabilities } from '../session/capabilities.ts';

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
  const given = caps['goog:chromeOptions'] ?? {};
  // what is not what chromedriver takes goes to it unchanged: its refusal then reaches the client as it says it
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return caps;
  const options = given as { binary?: unknown; args?: unknown };
  if (options.args !== undefined && !Array.isArray(options.args)) return caps;
  const args = (options.args as unknown[] | undefined) ?? [];
  const flag = (arg: unknown) => (typeof arg === 'string' ? arg.split('=')[0] : arg);
  const present = new Set(args.map(flag));
  caps['goog:chromeOptions'] = {
    ...options,
    binary: options.binary ?? defaults.binary,
    args: [...args, ...defaults.args.filter((arg) => !present.has(flag(arg)))],
  };
  return caps;
}
