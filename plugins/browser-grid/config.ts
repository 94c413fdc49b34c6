// The browser grid's options. Names follow playwright-distributed's
// environment variables (accepted as they are), times are in seconds.

export interface BrowserGridConfig {
  host: string;
  port: number;
  token?: string;
  defaultBrowserType: 'chromium' | 'firefox' | 'webkit';
  browserTypes: ('chromium' | 'firefox' | 'webkit')[];
  workers: number;
  workerHost: string;
  advertiseHost?: string;
  executablePath?: string;
  launchArgs: string[];
  maxConcurrentSessions: number;
  maxLifetimeSessions: number;
  heartbeatInterval: number;
  redisKeyTtl: number;
  staleThreshold: number;
  reaperRunInterval: number;
  shutdownCommandTtl: number;
  drainTimeout: number;
  queueSize: number;
  queueTimeout: number;
  dialAttempts: number;
  reaperInProxy: boolean;
  adoptForeignWorkers: boolean;
  keepaliveInterval: number;
}

const seconds = (def: number, description: string) => ({ type: 'number', exclusiveMinimum: 0, default: def, description });
const browserType = { type: 'string', enum: ['chromium', 'firefox', 'webkit'] };

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
    advertiseHost: { type: 'string', minLength: 1, description: 'Host proxies dial to reach this machine\'s browser servers (default: workerHost).' },
    executablePath: { type: 'string', minLength: 1, description: 'Browser binary (default: /usr/bin/chromium when present, else Playwright\'s own install).' },
    launchArgs: { type: 'array', items: { type: 'string' }, default: [], description: 'Extra browser command-line flags.' },
    maxConcurrentSessions: { type: 'integer', minimum: 1, default: 5, description: 'Sessions one browser server runs at once.' },
    maxLifetimeSessions: { type: 'integer', minimum: 1, default: 50, description: 'Sessions after which a browser server is drained and replaced.' },
    heartbeatInterval: seconds(5, 'How often a worker refreshes its record.'),
    redisKeyTtl: seconds(60, 'TTL of a worker record; must exceed heartbeatInterval.'),
    staleThreshold: seconds(30, 'Heartbeat age after which a worker is not selected and is reaped; must exceed heartbeatInterval.'),
    reaperRunInterval: seconds(300, 'How often the reaper runs; must exceed staleThreshold.'),
    shutdownCommandTtl: seconds(60, 'TTL of a shutdown command; must exceed heartbeatInterval.'),
    drainTimeout: seconds(300, 'Longest a draining worker waits for its sessions to close.'),
    queueSize: { type: 'integer', minimum: 0, default: 100, description: 'Clients that may wait for a browser, per type (0: no queue).' },
    queueTimeout: seconds(30, 'Longest a client waits in the queue before a 503.'),
    dialAttempts: { type: 'integer', minimum: 1, maximum: 10, default: 3, description: 'Workers tried when dialing the chosen one fails.' },
    reaperInProxy: { type: 'boolean', default: true, description: 'Run the reaper inside each proxy (when no reaper role runs in the process).' },
    adoptForeignWorkers: {
      type: 'boolean',
      default: true,
      description: 'Index workers registered by playwright-distributed (a SCAN of the keyspace every 2 heartbeats per proxy); turn off on a large shared Redis with no such workers.',
    },
    keepaliveInterval: { type: 'number', minimum: 0, default: 30, description: 'Ping idle clients this often; one silent for a whole interval after a ping is disconnected (0: off).' },
  },
} as const;

/** playwright-distributed's environment names → option. */
export const configEnv = {
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

/** Seed 003's timing rules; each broken rule is one message. */
export function checkTiming(c: BrowserGridConfig): string[] {
  const problems: string[] = [];
  const rule = (ok: boolean, text: string) => ok || problems.push(text);
  rule(c.heartbeatInterval < c.redisKeyTtl, `redisKeyTtl (${c.redisKeyTtl}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or live workers expire`);
  rule(c.heartbeatInterval < c.staleThreshold, `staleThreshold (${c.staleThreshold}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or the reaper removes live workers`);
  rule(c.heartbeatInterval < c.shutdownCommandTtl, `shutdownCommandTtl (${c.shutdownCommandTtl}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or commands expire unseen`);
  rule(c.staleThreshold < c.reaperRunInterval, `reaperRunInterval (${c.reaperRunInterval}s) must be greater than staleThreshold (${c.staleThreshold}s)`);
  return problems;
}
