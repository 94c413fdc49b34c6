// The WebDriver grid's options, one section per role. Times are in seconds.
// The grid-wide timeouts live in Redis (WebGrid's `timeouts` hash): the values
// here are the defaults written there when a field is missing.
import { isIP } from 'node:net';

export interface Timeouts {
  queue: number;
  scheduling: number;
  nodeStartup: number;
  driverStartup: number;
  sessionTermination: number;
  slotReclaimInterval: number;
}

export interface WebDriverConfig {
  timeouts: Timeouts;
  heartbeat: { interval: number; nodeTtl: number; managerTtl: number };
  proxy: {
    host: string;
    port: number;
    token?: string;
    externalUrl?: string;
    metricsFlushInterval: number;
    bodyTimeout: number;
    headerTimeout: number;
    bodyLimit: number;
    maxConnectionsPerClient: number;
    trustedProxies: string[];
    stereotypeVersion: 'none' | 'major' | 'full';
  };
  manager: { host: string; port: number; advertiseHost?: string; queueTimeout: 'request' | 'slot' };
  orchestrator: {
    id?: string;
    slots: number;
    platformName: string;
    browserBinary: string;
    driverBinary: string;
    browserArgs: string[];
    browsers: ('auto' | 'chrome' | 'webkitgtk' | 'firefox')[];
    webkitgtk: { driverBinary: string; browserBinary: string; browserArgs: string[] };
    firefox: { driverBinary: string; browserBinary: string; browserArgs: string[] };
    xvfb: string;
    nodeHost: string;
    advertiseHost?: string;
    nodeMode: 'inline' | 'process';
    warmDrivers: number;
    driverLogFile?: string;
  };
  node: { sessionId?: string; orchestratorId?: string };
  api: { host: string; port: number };
  gc: { interval: number; retention: number; maxSessions: number; maxBytes: number };
  recording: { enabled: boolean; ffmpeg: string; fps: number; quality: number; maxWidth: number; maxHeight: number };
  storage: { id?: string; folder?: string; host: string; port: number; advertiseHost?: string; maxBytes: number; maxAge: number; interval: number };
}

const seconds = (def: number, description: string) => ({ type: 'number', exclusiveMinimum: 0, default: def, description });
/** The settings of a browser beside Chrome: its driver, its browser and the arguments filled in. */
const engineSettings = (description: string, driver: { default: string; description: string }, browser: { default: string; description: string }, args: { default: string[]; description: string }) => ({
  type: 'object',
  additionalProperties: false,
  default: {},
  description,
  properties: {
    driverBinary: { type: 'string', minLength: 1, ...driver },
    browserBinary: { type: 'string', minLength: 1, ...browser },
    browserArgs: { type: 'array', items: { type: 'string' }, ...args },
  },
});
const host = (description: string) => ({ type: 'string', minLength: 1, default: '127.0.0.1', description });
const port = (def: number, description: string) => ({ type: 'integer', minimum: 0, maximum: 65535, default: def, description });

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeouts: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Defaults for the `timeouts` hash in Redis; a field already there wins (change it live with HSET).',
      properties: {
        queue: seconds(300, 'Longest a new session waits for a free slot (QTIMEOUT); Selenium Grid\'s session-request-timeout. At least sessionTermination, so a queued client outwaits a session its client abandoned.'),
        scheduling: seconds(60, 'Longest the orchestrator may take to schedule the node (OTIMEOUT).'),
        nodeStartup: seconds(120, 'Longest the node may take to become responsive (NTIMEOUT).'),
        driverStartup: seconds(30, 'Longest the driver (chromedriver) may take to answer /status (DTIMEOUT).'),
        sessionTermination: seconds(300, 'A session idle this long (no command, no BiDi message or pong) is ended (STIMEOUT); Selenium Grid\'s session-timeout.'),
        slotReclaimInterval: seconds(300, 'How often an orchestrator reclaims slots of dead sessions and orphaned slots.'),
      },
    },
    heartbeat: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        interval: seconds(10, 'How often managers, orchestrators, nodes and the API refresh their keys, and the proxy, API and storage roles read the API keys (a revoked key is refused within it).'),
        nodeTtl: { type: 'number', exclusiveMinimum: 0, maximum: 60, default: 60, description: 'TTL of session:ID:heartbeat.node (WebGrid: 60 s).' },
        managerTtl: { type: 'number', exclusiveMinimum: 0, maximum: 30, default: 30, description: 'TTL of session:ID:heartbeat.manager (WebGrid: 30 s).' },
      },
    },
    proxy: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: host('Address the proxy binds (0.0.0.0 to serve other machines).'),
        port: port(4444, 'The one URL clients use (0 picks a free port).'),
        token: { type: 'string', minLength: 1, description: 'When set, every request to the proxy and the API needs it or an API key (coord webdriver apikey): Authorization: Bearer TOKEN, the password of http://user:TOKEN@host:4444, or ?token=TOKEN on a WebSocket.' },
        externalUrl: { type: 'string', pattern: '^(https?|wss?)://', description: 'The URL clients reach the proxy by, when it differs from what they send (e.g. https://grid.example.com behind a TLS load balancer): new sessions\' webSocketUrl is built on it.' },
        metricsFlushInterval: seconds(1, 'How often the proxy adds its request and byte counts to the metrics keys.'),
        bodyTimeout: seconds(10, 'A request body that stops arriving for this long is answered 408 and the connection closed.'),
        headerTimeout: seconds(10, 'A request head not whole this long after the connection opened (or after its first byte) is answered 408 and the connection closed.'),
        bodyLimit: { type: 'integer', minimum: 1024, default: 16 * 1024 * 1024, description: 'Largest request body in bytes (default 16 MiB) the proxy, managers and nodes take; a larger one is answered 413 with a W3C error. Give every process the same value.' },
        maxConnectionsPerClient: { type: 'integer', minimum: 0, default: 256, description: 'Slow connections one client may have: those whose request head is still incomplete 1 s after it was awaited (0: no cap); one more is answered 429 and closed. Connections that send whole requests promptly are never counted.' },
        trustedProxies: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Load balancers or reverse proxies in front of the proxy (addresses, or subnets such as 10.0.0.0/8) whose X-Forwarded-For names the client: the client is its last address not in this list. Empty: X-Forwarded-For is not believed.' },
        stereotypeVersion: { type: 'string', enum: ['none', 'major', 'full'], default: 'none', description: 'The browserVersion GraphQL stereotypes carry (what KEDA\'s selenium-grid scaler matches a trigger\'s browserVersion against): none, as Selenium Grid serves detected drivers (for triggers without one); major (e.g. 156) or full, for triggers naming a version. Read by the proxy and the API.' },
      },
    },
    manager: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: host('Address the manager binds.'),
        port: port(0, 'Manager port (0: a free one; proxies find it through Redis).'),
        advertiseHost: { type: 'string', minLength: 1, description: 'Host proxies dial to reach this manager (default: host).' },
        queueTimeout: {
          type: 'string',
          enum: ['request', 'slot'],
          default: 'request',
          description: 'What timeouts.queue bounds. request: the whole New Session request — the wait for a slot, scheduling and node start-up — as Selenium Grid\'s session-request-timeout does. slot: only the wait for a free slot; scheduling and node start-up then have their own timeouts on top.',
        },
      },
    },
    orchestrator: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        id: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$', description: 'Orchestrator ID, kept across restarts so its backlog and pending lists are found again (default: derived from the host name).' },
        slots: { type: 'integer', minimum: 1, maximum: 256, default: 2, description: 'Sessions this orchestrator runs at once.' },
        platformName: { type: 'string', minLength: 1, default: 'linux', description: 'W3C platformName its nodes offer (any matches every request).' },
        browserBinary: { type: 'string', minLength: 1, default: '/usr/bin/chromium', description: 'Chrome/Chromium binary: its version is registered, and it is the default goog:chromeOptions.binary.' },
        driverBinary: { type: 'string', minLength: 1, default: '/usr/bin/chromedriver', description: 'chromedriver binary each node starts.' },
        browserArgs: {
          type: 'array',
          items: { type: 'string' },
          default: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
          description: 'Arguments added to goog:chromeOptions.args when the client does not give them.',
        },
        browsers: {
          type: 'array',
          items: { type: 'string', enum: ['auto', 'chrome', 'webkitgtk', 'firefox'] },
          minItems: 1,
          uniqueItems: true,
          default: ['chrome'],
          description: 'Browsers this orchestrator offers, sharing its slots: chrome (chromedriver), webkitgtk (WebKitWebDriver, MiniBrowser and Xvfb), firefox (geckodriver), or auto: every one whose driver and browser this host has, as Selenium\'s node offers the drivers it finds. A named one this host cannot run stops the orchestrator at start, saying what is missing.',
        },
        webkitgtk: engineSettings(
          'WebKitGTK, served through WebKitWebDriver (browserName MiniBrowser); each session runs on an Xvfb display of its own.',
          { default: 'WebKitWebDriver', description: 'WebKitWebDriver: a path, or a name looked up on PATH (Debian package webkit2gtk-driver).' },
          { default: '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser', description: 'MiniBrowser: its version is registered, and it is the default webkitgtk:browserOptions.binary.' },
          { default: ['--automation'], description: 'Arguments added to webkitgtk:browserOptions.args when the client does not give them (MiniBrowser serves a driver only with --automation).' },
        ),
        firefox: engineSettings(
          'Firefox, served through geckodriver (browserName firefox).',
          { default: 'geckodriver', description: 'geckodriver: a path, or a name looked up on PATH.' },
          { default: 'firefox-esr', description: 'Firefox: its version is registered, and it is the default moz:firefoxOptions.binary.' },
          { default: ['-headless'], description: 'Arguments added to moz:firefoxOptions.args when the client does not give them.' },
        ),
        xvfb: { type: 'string', minLength: 1, default: 'Xvfb', description: 'The X server a node starts for a browser that needs a display (WebKitGTK): a path, or a name looked up on PATH (Debian package xvfb).' },
        nodeHost: host('Address nodes bind.'),
        advertiseHost: { type: 'string', minLength: 1, description: 'Host proxies dial to reach this machine\'s nodes (default: nodeHost).' },
        nodeMode: { type: 'string', enum: ['inline', 'process'], default: 'inline', description: 'inline: nodes run inside the orchestrator process; process: each node is its own `coord run --role node` process (needs a Redis URL).' },
        warmDrivers: { type: 'integer', minimum: 0, maximum: 16, default: 1, description: 'chromedrivers kept started ahead of sessions (inline nodes), so a new session does not wait for one to boot.' },
        driverLogFile: { type: 'string', minLength: 1, description: 'Append chromedriver\'s output here (default: discarded).' },
      },
    },
    node: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Set by the orchestrator when it starts a node process (--role node).',
      properties: {
        sessionId: { type: 'string', format: 'uuid', description: 'The session the node serves.' },
        orchestratorId: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$', description: 'The orchestrator that started it.' },
      },
    },
    api: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: host('Address the API binds.'),
        port: port(4445, 'API port (0 picks a free one).'),
      },
    },
    gc: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        interval: seconds(60, 'How often gc runs.'),
        retention: seconds(86400, 'How long terminated sessions are kept for the API before they are purged.'),
        maxSessions: { type: 'integer', minimum: 0, default: 10_000, description: 'Terminated sessions past this many are purged, oldest first, before their retention ends (0: no count limit).' },
        maxBytes: { type: 'integer', minimum: 0, default: 100 * 1024 ** 2, description: 'Terminated sessions past this much Redis memory in all are purged, oldest first (0: no size limit).' },
      },
    },
    recording: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Screen recordings of sessions: frames from Chromium (CDP screencast) encoded by ffmpeg into MP4 files in the storage\'s folder.',
      properties: {
        enabled: { type: 'boolean', default: false, description: 'Record every session that does not say otherwise (a session says with se:recordVideo or coord:options.recordVideo, true or false). When true, nodes refuse to start without ffmpeg.' },
        ffmpeg: { type: 'string', minLength: 1, default: 'ffmpeg', description: 'The ffmpeg binary: a path, or a name looked up on PATH.' },
        fps: { type: 'integer', minimum: 1, maximum: 30, default: 10, description: 'Frames per second of the video (the last screen is repeated while the page does not change).' },
        quality: { type: 'integer', minimum: 10, maximum: 100, default: 70, description: 'JPEG quality of the frames Chromium sends.' },
        maxWidth: { type: 'integer', minimum: 64, maximum: 3840, default: 1280, description: 'Frames wider than this are scaled down by Chromium.' },
        maxHeight: { type: 'integer', minimum: 64, maximum: 2160, default: 720, description: 'Frames taller than this are scaled down by Chromium.' },
      },
    },
    storage: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Where recordings go (nodes write into the folder) and the storage role that serves them at GET /storage/{id}/… through the proxy.',
      properties: {
        id: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$', description: 'Storage ID: one per folder; providers sharing a folder share it (default: derived from the host name).' },
        folder: { type: 'string', minLength: 1, description: 'The folder recordings are kept in (default: coord-recordings-{user}/{id} under the system\'s temporary folder). Nodes on other machines must see it at the same path (a shared mount).' },
        host: host('Address the storage role binds (the proxy fetches recordings from it).'),
        port: port(0, 'Storage port (0: a free one; proxies find it through Redis).'),
        advertiseHost: { type: 'string', minLength: 1, description: 'Host proxies dial to reach this storage role (default: host).' },
        maxBytes: { type: 'integer', minimum: 0, default: 10 * 1024 ** 3, description: 'Recordings past this many bytes in all are deleted, oldest first (0: no size limit).' },
        maxAge: { type: 'number', minimum: 0, default: 7 * 86400, description: 'Recordings older than this many seconds are deleted (0: no age limit).' },
        interval: seconds(60, 'How often the storage role re-reads its folder, applies the limits and writes its metrics (a recording announced by a node is indexed at once).'),
      },
    },
  },
} as const;

/** WebGrid-style environment names → option. */
export const configEnv = {
  WEBDRIVER_PORT: 'proxy.port',
  WEBDRIVER_TOKEN: 'proxy.token',
  WEBDRIVER_SLOTS: 'orchestrator.slots',
  WEBDRIVER_ORCHESTRATOR_ID: 'orchestrator.id',
  WEBDRIVER_SESSION_ID: 'node.sessionId',
  WEBDRIVER_NODE_ORCHESTRATOR_ID: 'node.orchestratorId',
  WEBDRIVER_QUEUE_TIMEOUT: 'timeouts.queue',
  WEBDRIVER_EXTERNAL_URL: 'proxy.externalUrl',
  WEBDRIVER_RECORD_VIDEO: 'recording.enabled',
  WEBDRIVER_STORAGE_FOLDER: 'storage.folder',
} as const;

/** Rules between options; each broken rule is one message. */
export function checkConfig(c: WebDriverConfig): string[] {
  const problems: string[] = [];
  const rule = (ok: boolean, text: string) => ok || problems.push(text);
  rule(c.heartbeat.interval < c.heartbeat.nodeTtl, `heartbeat.nodeTtl (${c.heartbeat.nodeTtl}s) must be greater than heartbeat.interval (${c.heartbeat.interval}s), or live nodes look dead`);
  rule(c.heartbeat.interval < c.heartbeat.managerTtl, `heartbeat.managerTtl (${c.heartbeat.managerTtl}s) must be greater than heartbeat.interval (${c.heartbeat.interval}s), or waiting sessions look abandoned`);
  for (const entry of c.proxy.trustedProxies) rule(isAddressOrSubnet(entry), `proxy.trustedProxies: "${entry}" is not an IP address or a subnet (address/bits, e.g. 10.0.0.0/8)`);
  rule(
    c.timeouts.queue >= c.timeouts.sessionTermination,
    `timeouts.queue (${c.timeouts.queue}s) must be at least timeouts.sessionTermination (${c.timeouts.sessionTermination}s), or clients waiting for a slot give up before a session whose client died gives it back; lower sessionTermination too`,
  );
  return problems;
}

function isAddressOrSubnet(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}
