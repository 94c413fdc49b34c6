// The browser grid's options. Names follow playwright-distributed's
// environment variables (accepted as they are), times are in seconds.
import type Semver from 'semver';
import { lazyModule } from '../../entries/plugin.ts';
import { isWildcard } from './worker/advertise.ts';

// Only a versionsOnDemand range needs it: not every command that reads this config.
const semver = lazyModule<typeof Semver>('semver');

export interface BrowserGridConfig {
  host: string;
  port: number;
  token?: string;
  defaultBrowserType: 'chromium' | 'firefox' | 'webkit';
  browserTypes: ('chromium' | 'firefox' | 'webkit')[];
  workers: number;
  workerHost: string;
  workerPorts?: string;
  advertiseHost?: string;
  executablePath?: string;
  launchArgs: string[];
  maxConcurrentSessions: number;
  maxLifetimeSessions: number;
  heartbeatInterval: number;
  redisKeyTtl: number;
  staleThreshold: number;
  proxyTimeout: number;
  reaperRunInterval: number;
  shutdownCommandTtl: number;
  drainTimeout: number;
  queueSize: number;
  queueTimeout: number;
  sessionKeepAlive: number;
  sessionRetention: number;
  dialAttempts: number;
  reaperInProxy: boolean;
  adoptForeignWorkers: boolean;
  keyspaceEvents: 'configure' | 'preset';
  keepaliveInterval: number;
  cdp: boolean;
  cdpDirect: boolean;
  bidi: boolean;
  firefoxBinary?: string;
  playwrightVersions?: string[];
  playwrightCache?: string;
  ffmpeg: string;
  registryTimeout: number;
  versionsOnDemand?: string | string[];
}

const seconds = (def: number, description: string) => ({ type: 'number', exclusiveMinimum: 0, default: def, description });
const browserType = { type: 'string', enum: ['chromium', 'firefox', 'webkit'] };
const majorMinor = { type: 'string', pattern: '^[0-9]+\\.[0-9]+$' };

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string', default: '127.0.0.1', description: 'Address the proxy binds (0.0.0.0 to serve other machines).' },
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080, description: 'Proxy port (0 picks a free one).' },
    token: { type: 'string', minLength: 1, description: 'When set, clients must send it: ?token=… or Authorization: Bearer ….' },
    defaultBrowserType: { ...browserType, default: 'chromium', description: 'Browser served on / with no ?browser=.' },
    browserTypes: { type: 'array', items: browserType, minItems: 1, uniqueItems: true, default: ['chromium'], description: 'Browsers this process\'s workers launch.' },
    workers: { type: 'integer', minimum: 1, maximum: 256, default: 2, description: 'Browser servers per worker process, per browser type.' },
    workerHost: { type: 'string', default: '127.0.0.1', description: 'Address the browser servers bind.' },
    workerPorts: {
      type: 'string',
      pattern: '^[0-9]+-[0-9]+$',
      description: "Ports the browser servers bind, as 'FIRST-LAST' (default: any free port). Give at least twice as many as the process runs servers: a recycled server's replacement starts while it drains.",
    },
    advertiseHost: { type: 'string', minLength: 1, description: 'Host proxies dial to reach this machine\'s browser servers (default: workerHost; when workerHost is a wildcard such as 0.0.0.0, this host\'s first non-loopback IPv4 address, else its name).' },
    executablePath: { type: 'string', minLength: 1, description: 'Browser binary (default: /usr/bin/chromium when present, else Playwright\'s own install).' },
    launchArgs: { type: 'array', items: { type: 'string' }, default: [], description: 'Extra browser command-line flags.' },
    maxConcurrentSessions: { type: 'integer', minimum: 1, default: 5, description: 'Sessions one browser server runs at once.' },
    maxLifetimeSessions: { type: 'integer', minimum: 1, maximum: 999999, default: 50, description: 'Sessions after which a browser server is drained and replaced.' },
    heartbeatInterval: seconds(5, 'How often a worker refreshes its record.'),
    redisKeyTtl: seconds(60, 'TTL of a worker record; must exceed heartbeatInterval.'),
    staleThreshold: seconds(30, 'Heartbeat age after which a worker is not selected and is reaped; must exceed heartbeatInterval.'),
    proxyTimeout: seconds(10, "Heartbeat age after which a proxy is taken for dead: every live proxy looks on each of its heartbeats and gives back the dead one's leases (so within proxyTimeout + heartbeatInterval); must exceed heartbeatInterval."),
    reaperRunInterval: seconds(300, 'How often the reaper runs; must exceed staleThreshold.'),
    shutdownCommandTtl: seconds(60, 'TTL of a shutdown command; must exceed heartbeatInterval.'),
    drainTimeout: seconds(300, 'Longest a draining worker waits for its sessions to close.'),
    queueSize: { type: 'integer', minimum: 0, default: 100, description: 'Clients that may wait for a browser, per type (0: no queue).' },
    queueTimeout: seconds(300, 'Longest a client waits in the queue before a 503 (as Selenium Grid: test runners hold a browser for a whole run, so queued clients wait that long).'),
    sessionKeepAlive: seconds(60, 'How long a session created with POST /v1/sessions holds its slot waiting for its client to attach (ws://HOST:PORT/sessions/{id}) before it expires and the slot is given back: its keep_alive_ms.'),
    sessionRetention: seconds(3600, 'How long GET /v1/sessions/{id} still answers for a session created with POST /v1/sessions after it ended (completed, failed, expired).'),
    dialAttempts: { type: 'integer', minimum: 1, maximum: 10, default: 3, description: 'Workers tried when dialing the chosen one fails.' },
    reaperInProxy: { type: 'boolean', default: true, description: 'Run the reaper inside each proxy (when no reaper role runs in the process).' },
    adoptForeignWorkers: {
      type: 'boolean',
      default: true,
      description: 'Index workers registered by playwright-distributed (a SCAN of the keyspace every 2 heartbeats per proxy); turn off on a large shared Redis with no such workers.',
    },
    keyspaceEvents: {
      enum: ['configure', 'preset'],
      default: 'configure',
      description:
        'How the proxy gets the keyspace notifications (K, h, g, x) that tell it of foreign workers: configure: it adds them with CONFIG GET/SET (where CONFIG is refused, a SCAN every 2 heartbeats finds them); preset: the server already has them (notify-keyspace-events in redis.conf) and coord sends no CONFIG, as an ACL user without CONFIG needs.',
    },
    cdp: {
      type: 'boolean',
      default: true,
      description: 'Serve DevTools-protocol clients (Puppeteer, connectOverCDP) on ws://HOST:PORT/cdp: each Chromium worker runs a CDP port where every client gets a browser process of its own.',
    },
    cdpDirect: {
      type: 'boolean',
      default: true,
      description: 'Connect a CDP client straight to its browser when the worker is on the proxy\'s host (a loopback endpoint): each message then crosses one relay instead of two. The worker still owns the browser (the proxy holds a lease on it). false: always relay through the worker\'s CDP port.',
    },
    bidi: {
      type: 'boolean',
      default: false,
      description: 'Serve WebDriver BiDi clients (Puppeteer with protocol: \'webDriverBiDi\') on ws://HOST:PORT/bidi?browser=firefox: the worker process runs `workers` Firefox workers, each with a BiDi port where every client gets a Firefox process of its own. The worker refuses to start when no Firefox binary is found.',
    },
    firefoxBinary: {
      type: 'string',
      minLength: 1,
      description: 'The Firefox the BiDi workers run (bidi): a path, or a name looked up on PATH (default: firefox-esr, else firefox).',
    },
    playwrightVersions: {
      type: 'array',
      items: majorMinor,
      minItems: 1,
      uniqueItems: true,
      description: "Playwright versions (major.minor) this process's workers serve: `workers` browser servers per browser type and version, each from a playwright-core of that version (bundled, in node_modules as playwright-core-<version>, in playwrightCache, or installed once from the npm registry). Default: the bundled version only.",
    },
    playwrightCache: {
      type: 'string',
      minLength: 1,
      description: 'Folder of playwright-core versions (pw-<major.minor>/node_modules/playwright-core), installed there on first use (default: $XDG_CACHE_HOME/coord/playwright, else ~/.cache/coord/playwright). Fill it in advance to run offline.',
    },
    ffmpeg: { type: 'string', minLength: 1, default: 'ffmpeg', description: "The ffmpeg the browser servers encode clients' videos with (recordVideo), in place of Playwright's own build: a path, or a name looked up on PATH. Absent: the worker starts, says so, and video recording fails." },
    registryTimeout: seconds(5, 'Longest a worker waits for the npm registry when it must install a playwright-core version (one look-up, no retries): an offline host or a refused connection fails the clients waiting for that version within this bound plus npm\'s start-up, naming the cause.'),
    versionsOnDemand: {
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', items: majorMinor, minItems: 1, uniqueItems: true },
      ],
      description: "Playwright versions a worker process starts browser servers of when a client of a version no worker serves arrives (the client waits meanwhile): a semver range ('>=1.50 <2') or a list of major.minor. Unset: such clients get 428 at once.",
    },
    keepaliveInterval: { type: 'number', minimum: 0, default: 30, description: 'Ping idle clients this often; one silent for a whole interval after a ping is disconnected (0: off).' },
  },
} as const;

/** playwright-distributed's environment names, and coord's for the Playwright versions → option. */
export const configEnv = {
  COORD_PLAYWRIGHT_VERSIONS: 'playwrightVersions',
  COORD_PLAYWRIGHT_CACHE: 'playwrightCache',
  COORD_VERSIONS_ON_DEMAND: 'versionsOnDemand',
  MAX_CONCURRENT_SESSIONS: 'maxConcurrentSessions',
  MAX_LIFETIME_SESSIONS: 'maxLifetimeSessions',
  HEARTBEAT_INTERVAL: 'heartbeatInterval',
  REDIS_KEY_TTL: 'redisKeyTtl',
  DRAIN_TIMEOUT: 'drainTimeout',
  REAPER_RUN_INTERVAL: 'reaperRunInterval',
  SHUTDOWN_COMMAND_TTL: 'shutdownCommandTtl',
  DEFAULT_BROWSER_TYPE: 'defaultBrowserType',
  STALE_THRESHOLD: 'staleThreshold',
  PORT: 'port',
} as const;

/** Whether versionsOnDemand allows starting servers of major.minor `version`. */
export function onDemandAllows(c: Pick<BrowserGridConfig, 'versionsOnDemand'>, version: string): boolean {
  const allowed = c.versionsOnDemand;
  if (!allowed || !/^\d+\.\d+$/.test(version)) return false;
  if (Array.isArray(allowed)) return allowed.includes(version);
  const range = semver().validRange(allowed);
  return range !== null && semver().satisfies(`${version}.0`, range);
}

/** The ports of workerPorts ('FIRST-LAST'), or undefined when unset. */
export function portRange(spec: string | undefined): { first: number; last: number } | undefined {
  const m = /^(\d+)-(\d+)$/.exec(spec ?? '');
  return m ? { first: Number(m[1]), last: Number(m[2]) } : undefined;
}

/** playwright-distributed's timing rules and the port range; each broken rule is one message. */
export function checkTiming(c: BrowserGridConfig): string[] {
  const problems: string[] = [];
  const rule = (ok: boolean, text: string) => ok || problems.push(text);
  if (typeof c.versionsOnDemand === 'string') {
    rule(semver().validRange(c.versionsOnDemand) !== null, `versionsOnDemand "${c.versionsOnDemand}": expected a semver range such as ">=1.50 <2", or a list of major.minor versions`);
  }
  const ports = portRange(c.workerPorts);
  if (ports) {
    const valid = ports.first >= 1 && ports.first <= ports.last && ports.last <= 65535;
    rule(valid, `workerPorts "${c.workerPorts}": expected FIRST-LAST with 1 <= FIRST <= LAST <= 65535`);
    const versions = c.playwrightVersions?.length ?? 1;
    const needed = c.workers * (versions * c.browserTypes.length + (c.cdp && c.browserTypes.includes('chromium') ? 1 : 0) + (c.bidi ? 1 : 0));
    rule(!valid || ports.last - ports.first + 1 >= needed, `workerPorts "${c.workerPorts}" holds ${ports.last - ports.first + 1} ports, fewer than the ${needed} this process binds (workers × playwrightVersions × browserTypes, plus a CDP port per Chromium worker of the first version when cdp is on, plus workers BiDi ports when bidi is on)`);
  }
  if (c.advertiseHost) rule(!isWildcard(c.advertiseHost), `advertiseHost "${c.advertiseHost}" is a wildcard address, which proxies on other hosts cannot dial: give this host's name or address (or leave it unset to advertise this host's own address)`);
  rule(c.heartbeatInterval < c.redisKeyTtl, `redisKeyTtl (${c.redisKeyTtl}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or live workers expire`);
  rule(c.heartbeatInterval < c.staleThreshold, `staleThreshold (${c.staleThreshold}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or the reaper removes live workers`);
  rule(c.heartbeatInterval < c.proxyTimeout, `proxyTimeout (${c.proxyTimeout}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or live proxies are taken for dead`);
  rule(c.heartbeatInterval < c.shutdownCommandTtl, `shutdownCommandTtl (${c.shutdownCommandTtl}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or commands expire unseen`);
  rule(c.staleThreshold < c.reaperRunInterval, `reaperRunInterval (${c.reaperRunInterval}s) must be greater than staleThreshold (${c.staleThreshold}s)`);
  return problems;
}
