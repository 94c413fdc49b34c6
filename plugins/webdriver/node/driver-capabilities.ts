// What the node asks its driver for: the set the manager matched, less what
// only the grid looks at (browserVersion and platformName were matched against
// the orchestrator; other vendors' extensions mean nothing to this driver),
// with the machine's browser binary and default arguments filled in, in the
// engine's options capability (goog:chromeOptions, webkitgtk:browserOptions,
// moz:firefoxOptions), where the client gave none. webSocketUrl goes only to
// a driver that serves BiDi: WebKitWebDriver refuses a session that asks for
// it, and clients (WebdriverIO asks by default) go on with classic commands
// when the answer has none.
import type { Capabilities } from '../session/capabilities.ts';
import type { Engine } from './engines.ts';

export function driverCapabilities(matched: Capabilities, engine: Pick<Engine, 'optionsKey' | 'browserBinary' | 'browserArgs' | 'bidi'>): Capabilities {
  const vendor = `${engine.optionsKey.split(':')[0]}:`;
  const caps: Capabilities = {};
  for (const [name, value] of Object.entries(matched)) {
    if (name === 'browserVersion' || name === 'platformName') continue;
    if (name === 'webSocketUrl' && !engine.bidi) continue;
    if (name.includes(':') && !name.startsWith(vendor)) continue;
    caps[name] = value;
  }
  const given = caps[engine.optionsKey] ?? {};
  // what is not what the driver takes goes to it unchanged: its refusal then reaches the client as it says it
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return caps;
  const options = given as { binary?: unknown; args?: unknown };
  if (options.args !== undefined && !Array.isArray(options.args)) return caps;
  const args = (options.args as unknown[] | undefined) ?? [];
  const flag = (arg: unknown) => (typeof arg === 'string' ? arg.split('=')[0] : arg);
  const present = new Set(args.map(flag));
  caps[engine.optionsKey] = {
    ...options,
    binary: options.binary ?? engine.browserBinary,
    args: [...args, ...engine.browserArgs.filter((arg) => !present.has(flag(arg)))],
  };
  return caps;
}
