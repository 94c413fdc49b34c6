// W3C WebDriver's processing of a New Session request's capabilities
// (validate, merge alwaysMatch into each firstMatch, pick the first set that
// matches). A capability that is not what the spec allows is
// W3CError('invalid argument'), code COORD_ERR_WEBDRIVER_BAD_CAPABILITY.
import { W3CError } from '../errors.ts';

export type Capabilities = Record<string, unknown>;

const badCapability = (message: string) => new W3CError('invalid argument', message, undefined, { code: 'COORD_ERR_WEBDRIVER_BAD_CAPABILITY' });

/** Extension capabilities carry a prefix: 'goog:chromeOptions', 'se:name'. */
export const isExtension = (name: string) => name.includes(':');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What each standard capability must be; anything else without a ':' is refused. */
const standard: Record<string, (v: unknown) => string | undefined> = {
  acceptInsecureCerts: (v) => (typeof v === 'boolean' ? undefined : 'a boolean'),
  browserName: (v) => (typeof v === 'string' ? undefined : 'a string'),
  browserVersion: (v) => (typeof v === 'string' ? undefined : 'a string'),
  platformName: (v) => (typeof v === 'string' ? undefined : 'a string'),
  pageLoadStrategy: (v) => (v === 'none' || v === 'eager' || v === 'normal' ? undefined : 'one of "none", "eager", "normal"'),
  proxy: (v) => (isObject(v) ? undefined : 'an object'),
  setWindowRect: (v) => (typeof v === 'boolean' ? undefined : 'a boolean'),
  strictFileInteractability: (v) => (typeof v === 'boolean' ? undefined : 'a boolean'),
  webSocketUrl: (v) => (typeof v === 'boolean' ? undefined : 'a boolean'),
  unhandledPromptBehavior: (v) => (typeof v === 'string' || isObject(v) ? undefined : 'a string or an object'),
  timeouts: (v) => {
    if (!isObject(v)) return 'an object';
    for (const [k, t] of Object.entries(v)) {
      if (!['script', 'pageLoad', 'implicit'].includes(k)) return `an object of script, pageLoad, implicit (not "${k}")`;
      if (!(t === null && k === 'script') && !(Number.isInteger(t) && (t as number) >= 0)) return `an object whose ${k} is a whole number of ms`;
    }
    return undefined;
  },
};

/** Checks one capabilities object; null values are dropped, as the spec says. */
function validate(caps: unknown, where: string): Capabilities {
  if (!isObject(caps)) throw badCapability(`${where} must be a JSON object`);
  const out: Capabilities = {};
  for (const [name, value] of Object.entries(caps)) {
    if (value === null) continue;
    if (!isExtension(name)) {
      const check = standard[name];
      if (!check) throw badCapability(`${where}: "${name}" is not a W3C capability (extension capabilities need a prefix, e.g. "goog:${name}")`);
      const expected = check(value);
      if (expected) throw badCapability(`${where}.${name} must be ${expected}, got ${JSON.stringify(value)}`);
    }
    out[name] = value;
  }
  return out;
}

/**
 * The candidate capability sets of a New Session body, in order: alwaysMatch
 * merged into each firstMatch. Throws W3CError('invalid argument') for a body
 * that is not what the spec allows.
 */
export function capabilitySets(body: unknown): Capabilities[] {
  if (!isObject(body) || !isObject(body.capabilities)) {
    throw badCapability('the body must be {"capabilities": {"alwaysMatch": {...}, "firstMatch": [{...}]}}');
  }
  const request = body.capabilities;
  const always = validate(request.alwaysMatch ?? {}, 'capabilities.alwaysMatch');
  const first = request.firstMatch ?? [{}];
  if (!Array.isArray(first) || first.length === 0) throw badCapability('capabilities.firstMatch must be a non-empty list of objects');
  return first.map((entry, i) => {
    const caps = validate(entry, `capabilities.firstMatch[${i}]`);
    for (const name of Object.keys(caps)) {
      if (name in always) throw badCapability(`capabilities.firstMatch[${i}].${name} is also in alwaysMatch; a capability may be in only one of them`);
    }
    return { ...always, ...caps };
  });
}

/** What an orchestrator offers: its platform and its browsers as name::version. */
export interface Offer {
  platformName: string;
  browsers: readonly string[];
}

/**
 * W3C matching against an orchestrator: browserName equal, browserVersion a
 * prefix of the offered version, platformName equal (or the orchestrator
 * offers any). Extension capabilities take no part.
 */
export function matches(caps: Capabilities, offer: Offer): boolean {
  const platform = typeof caps.platformName === 'string' ? caps.platformName.toLowerCase() : undefined;
  if (platform !== undefined && platform !== 'any' && offer.platformName.toLowerCase() !== 'any' && offer.platformName.toLowerCase() !== platform) return false;
  return offer.browsers.some((entry) => {
    const at = entry.indexOf('::');
    const name = entry.slice(0, at);
    const version = entry.slice(at + 2);
    if (typeof caps.browserName === 'string' && caps.browserName !== name) return false;
    if (typeof caps.browserVersion === 'string' && !version.startsWith(caps.browserVersion)) return false;
    return true;
  });
}

/** The first candidate set that some orchestrator matches, with those orchestrators; undefined when none does. */
export function firstMatch(sets: readonly Capabilities[], offers: ReadonlyMap<string, Offer>): { caps: Capabilities; orchestrators: string[] } | undefined {
  for (const caps of sets) {
    const orchestrators = [...offers].filter(([, offer]) => matches(caps, offer)).map(([id]) => id);
    if (orchestrators.length) return { caps, orchestrators };
  }
  return undefined;
}

/** name and build for session:ID:metadata, from coord:options or Selenium's se:name / se:build. */
export function metadataOf(caps: Capabilities): { name: string; build: string } {
  const options = isObject(caps['coord:options']) ? caps['coord:options'] : {};
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { name: text(options.name) || text(caps['se:name']), build: text(options.build) || text(caps['se:build']) };
}
