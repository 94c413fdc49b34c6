// The browser grid's keyspace: playwright-distributed's four keys exactly as documented
// (so a real playwright-distributed worker or proxy can share the Redis),
// plus coord's indexes, leases and admission queue, marked as extensions.
import { defineContract } from '../../entries/plugin.ts';

const browserType = { type: 'string', enum: ['chromium', 'firefox', 'webkit'] };
/** Seconds (playwright-distributed's documented layout) or milliseconds (the real playwright-distributed worker). */
const timestamp = { type: 'integer', minimum: 0 };
const counter = { type: 'integer', minimum: 0 };
/** '{browserType}:{workerId}', the id a worker has in the counter hashes and indexes. */
const workerRef = { type: 'string', pattern: '^(chromium|firefox|webkit):[^:]+$' };

export const contract = defineContract({
  plugin: 'browser-grid',
  source: 'docs/layouts/browser-grid.md',
  keys: {
    worker: {
      pattern: 'worker:{browserType}:{workerId}',
      type: 'hash',
      description: 'A registered browser server. Written at start, refreshed every heartbeat, deleted on exit.',
      ttl: 'required',
      writers: ['worker', 'proxy'],
      derivable: true,
      params: { browserType: 'chromium|firefox|webkit' },
      fields: {
        id: { type: 'string' },
        browserType,
        wsEndpoint: { type: 'string', pattern: '^wss?://' },
        endpoint: { type: 'string', pattern: '^wss?://', description: 'written by playwright-distributed workers instead of wsEndpoint (coord writes both)' },
        cdpEndpoint: { type: 'string', pattern: '^wss?://', description: 'coord: where DevTools-protocol clients of this worker are relayed (one browser process per client); its path is the worker\'s secret, served to no other' },
        bidiEndpoint: { type: 'string', pattern: '^wss?://', description: 'coord: where WebDriver BiDi clients of this Firefox worker are relayed (one Firefox process per client); its path is the worker\'s secret. Such a worker has no wsEndpoint, endpoint or version: it serves no Playwright client' },
        status: { type: 'string', enum: ['available', 'draining', 'shutting-down'] },
        lastHeartbeat: timestamp,
        startedAt: timestamp,
        version: { type: 'string', description: 'Playwright version of the browser server (coord writes it for a playwright-distributed worker once learned from its server)' },
      },
      required: ['browserType', 'status', 'lastHeartbeat'],
    },
    activeConnections: {
      pattern: 'cluster:active_connections',
      type: 'hash',
      description: 'Sessions open on each worker right now; +1 on select, −1 on close, never negative.',
      ttl: 'none',
      writers: ['proxy', 'worker', 'reaper'],
      dynamicFields: { pattern: '{browserType}:{workerId}', value: counter, params: { browserType: 'chromium|firefox|webkit' } },
    },
    lifetimeConnections: {
      pattern: 'cluster:lifetime_connections',
      type: 'hash',
      description: 'Sessions each worker has served since it started; only grows, deleted with the worker.',
      ttl: 'none',
      writers: ['proxy', 'worker', 'reaper'],
      dynamicFields: { pattern: '{browserType}:{workerId}', value: counter, params: { browserType: 'chromium|firefox|webkit' } },
    },
    shutdownCommand: {
      pattern: 'worker:cmd:{browserType}:{workerId}',
      type: 'string',
      description: 'Asks a worker to drain and restart; set when it reaches its lifetime limit (also published on a channel of the same name).',
      ttl: 'required',
      writers: ['proxy'],
      params: { browserType: 'chromium|firefox|webkit' },
      value: { type: 'string', const: 'shutdown' },
    },
    workerIndex: {
      pattern: 'index:workers:{browserType}',
      type: 'zset',
      extension: true,
      description: 'Every known worker of a type, scored by its last heartbeat (ms): the reaper reads the stale end, selection counts it.',
      ttl: 'none',
      writers: ['worker', 'proxy', 'reaper'],
      params: { browserType: 'chromium|firefox|webkit' },
      member: workerRef,
      score: timestamp,
    },
    freeIndex: {
      pattern: 'index:free:{browserType}',
      type: 'zset',
      extension: true,
      description: 'Workers of a type that can take a session now (available, below both limits), scored by their Playwright major.minor band ((major × 1000 + minor) × 10⁶; 0 while unknown) plus their lifetime count: selection reads only the top of one band.',
      ttl: 'none',
      writers: ['worker', 'proxy', 'reaper'],
      params: { browserType: 'chromium|firefox|webkit' },
      member: workerRef,
      score: { type: 'number', minimum: 0 },
    },
    versions: {
      pattern: 'index:versions:{browserType}',
      type: 'hash',
      extension: true,
      description: 'The Playwright major.minor versions live available workers of a type speak → the latest heartbeat (ms) seen for each; selection drops a version unseen for the stale threshold.',
      ttl: 'none',
      writers: ['worker', 'proxy'],
      params: { browserType: 'chromium|firefox|webkit' },
      dynamicFields: { pattern: '{version}', value: timestamp, params: { version: '[0-9]+\\.[0-9]+' } },
    },
    proxyIndex: {
      pattern: 'index:proxies',
      type: 'zset',
      extension: true,
      description: 'Proxies holding connection leases, scored by their last heartbeat (ms); a proxy silent past the stale threshold has its leases repaired.',
      ttl: 'none',
      writers: ['proxy', 'reaper'],
      member: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
      score: timestamp,
    },
    leases: {
      pattern: 'leases:{proxyId}',
      type: 'hash',
      extension: true,
      description: 'The sessions a proxy relays: connection id → worker. Lets the reaper give back the capacity of a proxy that died.',
      ttl: 'none',
      writers: ['proxy', 'reaper'],
      derivable: true,
      dynamicFields: { pattern: '{connectionId}', value: workerRef },
    },
    queue: {
      pattern: 'queue:{browserType}:{version}',
      type: 'zset',
      extension: true,
      description: 'Clients of one Playwright major.minor ("any" for clients that name none, "cdp" for DevTools-protocol clients, "bidi" for WebDriver BiDi clients) waiting for a worker, first come first served: ticket → enqueue time (ms). Tickets carry their deadline and are dropped after it.',
      ttl: 'none',
      writers: ['proxy'],
      params: { browserType: 'chromium|firefox|webkit', version: '[0-9]+\\.[0-9]+|any|cdp|bidi' },
      member: { type: 'string', pattern: '^[0-9]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$', description: '{deadlineMs}:{proxyId}:{ticketId}' },
      score: timestamp,
    },
    versionClaim: {
      pattern: 'versions:claim:{browserType}:{version}',
      type: 'string',
      extension: true,
      description: 'The worker process starting browser servers of a version on demand (versionsOnDemand), so only one does: "starting:{processId}" (SET NX), or "failed: {why}" for the waiting proxies to answer with; deleted once the servers registered.',
      ttl: 'required',
      writers: ['worker'],
      params: { browserType: 'chromium|firefox|webkit', version: '[0-9]+\\.[0-9]+' },
      value: { type: 'string', pattern: '^(starting:[A-Za-z0-9_-]+|failed: .*)$' },
    },
  },
  channels: {
    shutdown: {
      pattern: 'worker:cmd:{browserType}:{workerId}',
      description: 'The shutdown command, published on the command key\'s name so a worker drains at once instead of at its next heartbeat.',
      message: { type: 'string', const: 'shutdown' },
      publishers: ['proxy'],
      subscribers: ['worker'],
    },
    versionWanted: {
      pattern: 'versions:wanted:{browserType}',
      description: 'A client of a Playwright version no worker serves is waiting (versionsOnDemand): a worker process that allows it claims versionClaim and starts servers of it.',
      message: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$', description: 'the major.minor wanted' },
      publishers: ['proxy'],
      subscribers: ['worker'],
    },
    capacity: {
      pattern: 'capacity:{browserType}',
      description: 'Published when a session closes or a worker becomes available, so queued clients are served at once rather than by polling.',
      message: { type: 'string', description: 'the worker ref that has room, or "*"' },
      publishers: ['proxy', 'worker', 'reaper'],
      subscribers: ['proxy'],
    },
  },
});

export type BrowserGridKeys = typeof contract.keys;
