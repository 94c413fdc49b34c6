// KEDA's selenium-grid scaler, ported line for line from kedacore/keda
// pkg/scalers/selenium_grid_scaler.go (getCountFromSeleniumResponse and the
// helpers it calls), so a test counts what KEDA would count from a grid's
// GraphQL answer. Two versions of the file were read: the newest stored
// (commit 0375467: platforms matched with Selenium's Platform families,
// enableManagedDownloads on by default — kedacore/keda#6570, #6684) and an
// older one (commit ea16be3: platformName matched by name, empty or "any"
// matching all — kedacore/keda#6477, no managed downloads): `legacy` selects
// the older one's matching. Go's quirks are
// kept on purpose: browserVersion matches when the TRIGGER's version starts
// with the stereotype's (or the request's), managedDownloadsEnabled is called
// with its arguments swapped, a non-string capability panics (here: throws).

/** The GraphQL query KEDA sends, verbatim. */
export const KEDA_QUERY =
  '{ grid { sessionCount, maxSession, totalSlots }, nodesInfo { nodes { id, status, sessionCount, maxSession, slotCount, stereotypes, sessions { id, capabilities, slot { id, stereotype } } } }, sessionsInfo { sessionQueueRequests } }';

/** The trigger's metadata KEDA passes on (defaults as KEDA's: sessionBrowserName = browserName, nodeMaxSessions 1, enableManagedDownloads true). */
export interface KedaTrigger {
  browserName?: string;
  sessionBrowserName?: string;
  browserVersion?: string;
  platformName?: string;
  nodeMaxSessions?: number;
  enableManagedDownloads?: boolean;
  capabilities?: string;
  /** The older scaler (commit ea16be3): platformName by name only, no se:downloadsEnabled handling. */
  legacy?: boolean;
}

type Caps = Record<string, unknown>;
interface KedaNode {
  id: string;
  status: string;
  sessionCount: number;
  maxSession: number;
  slotCount: number;
  stereotypes: string;
  sessions: { id: string; capabilities: string; slot: { id: string; stereotype: string } }[] | null;
}
export interface KedaResponse {
  data: { grid: unknown; nodesInfo: { nodes: KedaNode[] | null }; sessionsInfo: { sessionQueueRequests: string[] | null } };
}
interface Reserved {
  id: string;
  maxSession: number;
  slotCount: number;
}

const ENABLE_MANAGED_DOWNLOADS = 'se:downloadsEnabled';
const EXTENSION_PREFIXES = ['goog:', 'moz:', 'ms:', 'se:'];
const FUNCTION_PREFIXES = [ENABLE_MANAGED_DOWNLOADS];

interface Platform {
  name: string;
  family?: Platform;
}
const Windows: Platform = { name: 'windows' };
const Mac: Platform = { name: 'mac' };
const Unix: Platform = { name: 'unix' };
const family = (f: Platform, names: [string, ...string[]][]) => names.map(([name, ...aliases]) => [{ name, family: f } as Platform, aliases] as const);
/** KEDA's copy of Selenium's Platform enum: each entry and the lower-cased names that select it. */
const PLATFORMS: (readonly [Platform, string[]])[] = [
  [Windows, ['windows']],
  ...family(Windows, [
    ['Windows XP', 'windows server 2003', 'xp', 'winnt', 'windows_nt', 'windows nt'],
    ['Windows Vista', 'windows server 2008', 'windows vista'],
    ['Windows 7', 'windows 7', 'win7'],
    ['Windows 8', 'windows server 2012', 'windows 8', 'win8'],
    ['Windows 8.1', 'windows 8.1', 'win8.1'],
    ['Windows 10', 'windows 10', 'win10'],
    ['Windows 11', 'windows 11', 'win11'],
  ]),
  [Mac, ['mac', 'darwin', 'macos', 'mac os x', 'os x']],
  ...family(Mac, [
    ['OS X 10.6', 'os x 10.6', 'macos 10.6', 'snow leopard'],
    ['OS X 10.8', 'os x 10.8', 'macos 10.8', 'mountain lion'],
    ['OS X 10.9', 'os x 10.9', 'macos 10.9', 'mavericks'],
    ['OS X 10.10', 'os x 10.10', 'macos 10.10', 'yosemite'],
    ['OS X 10.11', 'os x 10.11', 'macos 10.11', 'el capitan'],
    ['macOS 10.12', 'os x 10.12', 'macos 10.12', 'sierra'],
    ['macOS 10.13', 'os x 10.13', 'macos 10.13', 'high sierra'],
    ['macOS 10.14', 'os x 10.14', 'macos 10.14', 'mojave'],
    ['macOS 10.15', 'os x 10.15', 'macos 10.15', 'catalina'],
    ['macOS 11.0', 'os x 11.0', 'macos 11.0', 'big sur'],
    ['macOS 12.0', 'os x 12.0', 'macos 12.0', 'monterey'],
    ['macOS 13.0', 'os x 13.0', 'macos 13.0', 'ventura'],
    ['macOS 14.0', 'os x 14.0', 'macos 14.0', 'sonoma'],
    ['macOS 15.0', 'os x 15.0', 'macos 15.0', 'sequoia'],
  ]),
  ...family(Unix, [['linux', 'linux'], ['bsd', 'bsd'], ['solaris', 'solaris']]),
  [{ name: 'android' }, ['android', 'dalvik']],
  [{ name: 'iOS' }, ['ios']],
  [{ name: 'any' }, ['any', '']],
];

function getPlatform(input: string): Platform {
  const lower = input.toLowerCase();
  return PLATFORMS.find(([, names]) => names.includes(lower))?.[0] ?? { name: lower };
}
const isSameFamily = (p1: Platform, p2: Platform) => !!p1.family && !!p2.family && p1.family === p2.family;
const equalFold = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Go's value.(string): a capability that is there but not a string panics. */
function getCapability(capability: Caps, key: string): string {
  if (!(key in capability)) return '';
  const value = capability[key];
  if (typeof value !== 'string') throw new Error(`interface conversion: ${key} is ${typeof value}, not string (KEDA panics)`);
  return value;
}

function filterCapabilities(capabilities: Caps): Caps {
  const filtered: Caps = {};
  for (const [key, value] of Object.entries(capabilities)) {
    let retain = !EXTENSION_PREFIXES.some((prefix) => key.startsWith(prefix));
    if (FUNCTION_PREFIXES.some((prefix) => key.startsWith(prefix))) retain = true;
    if (retain) filtered[key] = value;
  }
  return filtered;
}

/** (stereotype, capabilities) in Go's signature; its callers pass (trigger capabilities, stereotype or request). */
function managedDownloadsEnabled(stereotype: Caps, capabilities: Caps): boolean {
  const value1 = capabilities[ENABLE_MANAGED_DOWNLOADS];
  if (value1 === undefined || value1 !== true) return true;
  return stereotype[ENABLE_MANAGED_DOWNLOADS] === true;
}

function extensionCapabilitiesMatch(stereotype: Caps, capabilities: Caps): boolean {
  const filtered = filterCapabilities(capabilities);
  if (Object.keys(filtered).length === 0) return true;
  for (const [key, value] of Object.entries(filtered)) {
    if (key === ENABLE_MANAGED_DOWNLOADS) continue; // (the older scaler never has it: it does not add it to the trigger's capabilities)
    if (!(key in stereotype) || stereotype[key] !== value) return false;
  }
  return true;
}

function platformMatch(platformName: string, capability: Caps, legacy: boolean): boolean {
  if (legacy) {
    const p = getCapability(capability, 'platformName');
    return (p === '' || equalFold('any', p) || equalFold(platformName, p)) && (platformName === '' || platformName === 'any' || equalFold(platformName, p));
  }
  const theirs = getPlatform(getCapability(capability, 'platformName'));
  const ours = getPlatform(platformName);
  return equalFold(ours.name, theirs.name) || isSameFamily(ours, theirs);
}

function versionMatch(browserVersion: string, capability: Caps): boolean {
  const theirs = getCapability(capability, 'browserVersion');
  return (theirs === '' && browserVersion === '') || (theirs !== '' && browserVersion.startsWith(theirs));
}

function checkRequestCapabilitiesMatch(request: Caps, t: Required<KedaTrigger>, capabilities: Caps): boolean {
  const name = getCapability(request, 'browserName');
  const nameMatch = (name === '' && t.browserName === '') || equalFold(t.browserName, name);
  if (t.legacy) return nameMatch && versionMatch(t.browserVersion, request) && platformMatch(t.platformName, request, true) && extensionCapabilitiesMatch(request, capabilities);
  return nameMatch && versionMatch(t.browserVersion, request) && platformMatch(t.platformName, request, false) && managedDownloadsEnabled(capabilities, request) && extensionCapabilitiesMatch(request, capabilities);
}

function checkStereotypeCapabilitiesMatch(capability: Caps, t: Required<KedaTrigger>, capabilities: Caps): boolean {
  const name = getCapability(capability, 'browserName');
  const nameMatch = (name === '' && t.browserName === '') || equalFold(t.browserName, name) || equalFold(t.sessionBrowserName, name);
  if (t.legacy) return nameMatch && versionMatch(t.browserVersion, capability) && platformMatch(t.platformName, capability, true) && extensionCapabilitiesMatch(capability, capabilities);
  return nameMatch && versionMatch(t.browserVersion, capability) && platformMatch(t.platformName, capability, false) && managedDownloadsEnabled(capabilities, capability) && extensionCapabilitiesMatch(capability, capabilities);
}

function countMatchingSlotsStereotypes(stereotypes: { slots: number; stereotype: Caps }[], t: Required<KedaTrigger>, capabilities: Caps): number {
  return stereotypes.reduce((n, s) => n + (checkStereotypeCapabilitiesMatch(s.stereotype, t, capabilities) ? s.slots : 0), 0);
}

/** Go's json.Unmarshal into a map: on error KEDA logs and skips; here the caller learns of it. */
function parseObject(text: string, what: string, errors: string[]): Caps | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Caps;
  } catch {}
  errors.push(`${what}: not a JSON object: ${text.slice(0, 80)}`);
  return undefined;
}

function countMatchingSessions(sessions: KedaNode['sessions'], t: Required<KedaTrigger>, capabilities: Caps, errors: string[]): number {
  let n = 0;
  for (const session of sessions ?? []) {
    const capability = parseObject(session.slot.stereotype, 'session slot stereotype', errors);
    if (capability && checkStereotypeCapabilitiesMatch(capability, t, capabilities)) n++;
  }
  return n;
}

const checkNodeReservedSlots = (reserved: Reserved[], nodeId: string, available: number) => reserved.find((r) => equalFold(r.id, nodeId))?.slotCount ?? available;

function updateOrAddReservedNode(reserved: Reserved[], nodeId: string, slotCount: number, maxSession: number): Reserved[] {
  const found = reserved.find((r) => equalFold(r.id, nodeId));
  if (found) {
    found.slotCount = slotCount;
    return reserved;
  }
  return [...reserved, { id: nodeId, slotCount, maxSession }];
}

/** What KEDA counts for one trigger: new nodes to start for matched queued requests, and matched running sessions; the metric is their sum. */
export interface KedaCount {
  newRequestNodes: number;
  onGoingSessions: number;
  /** What KEDA would have logged and skipped (unparseable stereotypes or requests). */
  errors: string[];
}

/** getCountFromSeleniumResponse for one trigger. */
export function kedaCount(response: KedaResponse, trigger: KedaTrigger): KedaCount {
  const t: Required<KedaTrigger> = {
    browserName: trigger.browserName ?? '',
    sessionBrowserName: trigger.sessionBrowserName || trigger.browserName || '',
    browserVersion: trigger.browserVersion ?? '',
    platformName: trigger.platformName ?? '',
    nodeMaxSessions: trigger.nodeMaxSessions ?? 1,
    enableManagedDownloads: trigger.enableManagedDownloads ?? true,
    capabilities: trigger.capabilities ?? '',
    legacy: trigger.legacy ?? false,
  };
  const errors: string[] = [];
  const capabilities: Caps = t.capabilities ? (parseObject(t.capabilities, "trigger metadata 'capabilities'", errors) ?? {}) : {};
  if (t.enableManagedDownloads && !t.legacy) capabilities[ENABLE_MANAGED_DOWNLOADS] = true;

  const requests = response.data.sessionsInfo.sessionQueueRequests ?? [];
  const nodes = response.data.nodesInfo.nodes ?? [];
  let reservedNodes: Reserved[] = [];
  let newRequestNodes: Reserved[] = [];
  requests.forEach((text, requestIndex) => {
    let isRequestMatched = false;
    const request = parseObject(text, 'sessionQueueRequest', errors);
    if (request && checkRequestCapabilitiesMatch(request, t, capabilities)) isRequestMatched = true;

    let isRequestReserved = false;
    for (const node of nodes) {
      if (!(isRequestMatched && equalFold(node.status, 'UP') && checkNodeReservedSlots(reservedNodes, node.id, node.maxSession - node.sessionCount) > 0)) continue;
      let availableSlotsMatch = 0;
      try {
        availableSlotsMatch += countMatchingSlotsStereotypes(JSON.parse(node.stereotypes) as { slots: number; stereotype: Caps }[], t, capabilities);
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        errors.push(`node stereotypes: ${error.message}`);
      }
      if (availableSlotsMatch === 0) continue;
      const currentSessionsMatch = countMatchingSessions(node.sessions, t, capabilities, errors);
      const canBeReserved = checkNodeReservedSlots(reservedNodes, node.id, node.maxSession - node.sessionCount);
      if (availableSlotsMatch > currentSessionsMatch) {
        reservedNodes = updateOrAddReservedNode(reservedNodes, node.id, canBeReserved - 1, node.maxSession);
        isRequestReserved = true;
        break;
      }
    }
    if (isRequestMatched && !isRequestReserved) {
      for (const node of newRequestNodes) {
        if (node.slotCount > 0) {
          newRequestNodes = updateOrAddReservedNode(newRequestNodes, node.id, node.slotCount - 1, t.nodeMaxSessions);
          isRequestReserved = true;
          break;
        }
      }
    }
    if (isRequestMatched && !isRequestReserved) {
      newRequestNodes = updateOrAddReservedNode(newRequestNodes, String.fromCodePoint(requestIndex), t.nodeMaxSessions - 1, t.nodeMaxSessions);
    }
  });

  let onGoingSessions = 0;
  for (const node of nodes) onGoingSessions += countMatchingSessions(node.sessions, t, capabilities, errors);
  return { newRequestNodes: newRequestNodes.length, onGoingSessions, errors };
}
