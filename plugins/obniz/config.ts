// The obniz plugin's options. Times are in seconds; the defaults are
// obniz-app-sdk 1.5's (heartbeat every 10 s with EX 20, dead after 30 s,
// health check every 10 s, sync every 60 s and 3 s after a failure).
import { hostname } from 'node:os';

export type DeviceSourceKind = 'auto' | 'file' | 'url' | 'module' | 'cloud' | 'none';

export interface ObnizConfig {
  instanceName?: string;
  slaves: number;
  worker?: string;
  devices?: string;
  deviceSource: DeviceSourceKind;
  devicesHeaders: Record<string, string>;
  appToken?: string;
  cloudApiUrl: string;
  cloudPageSize: number;
  cloudRateLimit: number;
  watchInterval: number;
  syncInterval: number;
  syncRetryInterval: number;
  heartbeatInterval: number;
  heartbeatTtl: number;
  deadAfter: number;
  healthCheckInterval: number;
  discover: boolean;
  discoverInterval: number;
  maxRemoveShare: number;
  webhook: boolean;
  webhookHost: string;
  webhookPort: number;
  webhookPath: string;
  webhookToken?: string;
  loopInterval: number;
  hookTimeout: number;
  closeTimeout: number;
  requestTimeout: number;
  startConcurrency: number;
  claimRetryInterval: number;
  obniz: 'auto' | 'on' | 'off';
  obnizModule: string;
  obnizOptions: Record<string, unknown>;
}

const seconds = (def: number, description: string) => ({ type: 'number', exclusiveMinimum: 0, default: def, description });

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    instanceName: { type: 'string', pattern: '^[^:\\s]+$', description: 'This process\'s name in slave:{name}:heartbeat, workers:{name} and app.{name} (default: hostname-pid). Unique per process.' },
    slaves: { type: 'integer', minimum: 1, maximum: 10000, default: 1, description: 'Slaves this process runs (slave and master roles), 1 to 10,000: over 1, they are named {instanceName}-1 … {instanceName}-N and share the process\'s two Redis connections.' },
    worker: { type: 'string', minLength: 1, description: 'Worker module (slave, master): a .js/.mjs file, or .ts (Deno runs it; Node transpiles it as it loads). Its default export is the Worker class.' },
    devices: { type: 'string', minLength: 1, description: 'Device list (manager, master): a JSON or YAML file (re-read when it changes), an http(s) URL, or a module whose default export returns the list.' },
    deviceSource: { enum: ['auto', 'file', 'url', 'module', 'cloud', 'none'], default: 'auto', description: 'auto: a URL → url, a .js/.mjs/.ts path → module, another path → file; no devices but an appToken → cloud.' },
    devicesHeaders: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'HTTP headers sent with a device-list URL (e.g. Authorization).' },
    appToken: { type: 'string', minLength: 1, description: 'obniz Cloud app token: the installed-device list comes from the obniz Cloud API, and device connections use it.' },
    cloudApiUrl: { type: 'string', pattern: '^https?://', default: 'https://api.obniz.com', description: 'obniz Cloud API base URL (GraphQL at /v1/graphql).' },
    cloudPageSize: { type: 'integer', minimum: 1, maximum: 1000, default: 50, description: 'Installs fetched per obniz Cloud API request.' },
    cloudRateLimit: { type: 'number', exclusiveMinimum: 0, default: 10, description: 'Most obniz Cloud API requests per second (the SDK\'s limit is 10).' },
    watchInterval: seconds(1, 'How often a device-list file is checked for changes.'),
    syncInterval: seconds(60, 'How often the manager re-reads the device list and synchronizes the slaves.'),
    syncRetryInterval: seconds(3, 'Next sync after a failed one.'),
    heartbeatInterval: seconds(10, 'How often slaves and managers write their heartbeat.'),
    heartbeatTtl: seconds(20, 'Expiry of a heartbeat key; must exceed heartbeatInterval.'),
    deadAfter: seconds(30, 'A slave whose heartbeat is older than this, or missing, is dead and its devices move; must be at least heartbeatTtl.'),
    healthCheckInterval: seconds(10, 'How often the manager checks the slaves\' heartbeats.'),
    discover: { type: 'boolean', default: true, description: 'Managers SCAN for slaves and managers that coord\'s indexes do not know yet (obniz-app-sdk processes sharing the Redis).' },
    discoverInterval: seconds(1, 'Between two steps of the manager\'s background SCAN for obniz-app-sdk slaves and managers (each step visits 1000 keys; coord processes index themselves and need none).'),
    maxRemoveShare: { type: 'number', minimum: 0, maximum: 1, default: 0.5, description: 'Largest share of the assigned devices one sync may remove (more than 5 devices); a list that would remove more is logged and its removals refused. 1 turns the guard off.' },
    webhook: { type: 'boolean', default: false, description: 'Serve the obniz Cloud webhook (install create/update/delete) on the manager.' },
    webhookHost: { type: 'string', default: '127.0.0.1', description: 'Address the webhook binds (0.0.0.0 to accept other machines).' },
    webhookPort: { type: 'integer', minimum: 0, maximum: 65535, default: 3333, description: 'Webhook port (the SDK\'s is 3333; 0 picks a free one).' },
    webhookPath: { type: 'string', pattern: '^/', default: '/webhook', description: 'Webhook path (GET or POST).' },
    webhookToken: { type: 'string', minLength: 1, description: 'When set, webhook calls must carry it: ?token=… or Authorization: Bearer ….' },
    loopInterval: seconds(1, 'Pause between two onLoop calls of a worker.'),
    hookTimeout: seconds(30, 'Longest a worker hook (onInstall, onStart, onEnd, onUninstall, onRequest, a running onLoop at stop) may take.'),
    closeTimeout: seconds(5, 'Longest closing a device connection may take when a worker stops.'),
    requestTimeout: seconds(10, 'Longest app.request / directRequest wait for the slaves\' answers.'),
    startConcurrency: { type: 'integer', minimum: 1, maximum: 1000, default: 16, description: 'Workers a slave starts or stops at the same time.' },
    claimRetryInterval: seconds(0.5, 'How often a slave retries a device whose previous slave has not stopped it yet.'),
    obniz: { enum: ['auto', 'on', 'off'], default: 'auto', description: 'Device connections: auto connects when the obniz module loads and an appToken is set; on requires it.' },
    obnizModule: { type: 'string', minLength: 1, default: 'obniz', description: 'Module whose default export is the obniz device class (npm package name or path).' },
    obnizOptions: { type: 'object', default: {}, description: 'Options passed to the device class constructor (access_token is set from appToken).' },
  },
} as const;

export const configEnv = {
  OBNIZ_INSTANCE_NAME: 'instanceName',
  OBNIZ_WORKER: 'worker',
  OBNIZ_DEVICES: 'devices',
  OBNIZ_APP_TOKEN: 'appToken',
  OBNIZ_WEBHOOK_PORT: 'webhookPort',
} as const;

/** `coord run --plugin obniz --worker ./w.mjs --devices devices.yaml --instance-name slave-1 --slaves 100`. */
export const configFlags = {
  worker: 'worker',
  devices: 'devices',
  'instance-name': 'instanceName',
  slaves: 'slaves',
  'app-token': 'appToken',
} as const;

/** Cross-field rules; each broken rule is one message. */
export function checkConfig(c: ObnizConfig): string[] {
  const problems: string[] = [];
  const rule = (ok: boolean, text: string) => ok || problems.push(text);
  rule(c.heartbeatInterval < c.heartbeatTtl, `heartbeatTtl (${c.heartbeatTtl}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or live slaves expire`);
  rule(c.heartbeatTtl <= c.deadAfter, `deadAfter (${c.deadAfter}s) must be at least heartbeatTtl (${c.heartbeatTtl}s)`);
  const source = deviceSourceKind(c);
  rule(!['file', 'url', 'module'].includes(source) || c.devices !== undefined, `deviceSource is ${source}: set devices (a file, URL or module)`);
  rule(source !== 'cloud' || c.appToken !== undefined, 'deviceSource is cloud: set appToken (OBNIZ_APP_TOKEN)');
  rule(source !== 'url' || c.devices === undefined || /^https?:\/\//.test(c.devices), `deviceSource is url: devices "${c.devices}" must start with http:// or https://`);
  return problems;
}

/** The device source a config selects (deviceSource 'auto' resolved). */
export function deviceSourceKind(c: Pick<ObnizConfig, 'deviceSource' | 'devices' | 'appToken'>): Exclude<DeviceSourceKind, 'auto'> {
  if (c.deviceSource !== 'auto') return c.deviceSource;
  if (c.devices === undefined) return c.appToken !== undefined ? 'cloud' : 'none';
  if (/^https?:\/\//.test(c.devices)) return 'url';
  if (/\.(m?js|cjs|m?ts)$/.test(c.devices)) return 'module';
  return 'file';
}

/**
 * How long after a heartbeat write it sent (and Redis confirmed) a slave may
 * keep its workers running: heartbeatTtl less a margin of min(2 s, half the
 * spare time heartbeatTtl − heartbeatInterval), 18 s with the defaults. Another
 * slave can be given the devices only once the heartbeat key has expired,
 * heartbeatTtl after that write at the earliest (Redis counts the TTL from when
 * it ran the write, never before it was sent); the margin is the time the
 * workers have to stop (onEnd) before then. Always longer than heartbeatInterval,
 * so a slave whose beats work never stops.
 */
export function fenceAfterMs(c: Pick<ObnizConfig, 'heartbeatInterval' | 'heartbeatTtl'>): number {
  const ttlMs = c.heartbeatTtl * 1000;
  return ttlMs - Math.min(2000, (ttlMs - c.heartbeatInterval * 1000) / 2);
}

/** This process's name: the configured one, else hostname-pid (unique per process). */
export function instanceNameOf(c: Pick<ObnizConfig, 'instanceName'>): string {
  return c.instanceName ?? `${hostname().replace(/[:\s]/g, '-')}-${process.pid}`;
}
