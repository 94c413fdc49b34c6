// The proxy: the one address clients reach with
// `chromium.connect('ws://HOST:PORT/?browser=chromium')`. It admits the client
// (selecting a worker, or queueing it), relays the WebSocket to the worker
// without parsing it, and gives the capacity back when either side closes.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Role, RoleContext } from '../../../core/plugin.ts';
import type { Subscriber } from '../../../core/backend.ts';
import { channelBuilders } from '../../../core/contract.ts';
import { Admission } from '../admission.ts';
import { adoptWorkers } from '../adopt.ts';
import type { BrowserGridConfig } from '../config.ts';
import { contract, type BrowserGridKeys } from '../contract.ts';
import { browserTypes, parseRef } from '../refs.ts';
import { dialUpgrade, DialError, pipeBoth } from '../relay.ts';
import { gridStatus } from '../status.ts';
import { reaperLoop } from './reaper.ts';

type Ctx = RoleContext<BrowserGridConfig, BrowserGridKeys>;

const DIAL_TIMEOUT_MS = 10_000;
/** Adoption of foreign workers runs every this many heartbeats. */
const ADOPT_EVERY = 2;

export function proxyRole(ctx: Ctx): Role {
  const { config, logger, scripts, keys, backend, clock } = ctx;
  const proxyId = randomUUID().replaceAll('-', '');
  const channels = channelBuilders(contract, ctx.global.redis.keyPrefix);
  const relays = new Set<Promise<void>>();
  const sockets = new Set<Socket>();
  let waitingHere = () => 0;
  const metrics = proxyMetrics(() => waitingHere());
  const publishCapacity = async (browserType: string) => {
    await backend.send(['PUBLISH', channels.capacity!({ browserType }), '*']);
  };
  const admission = new Admission(ctx, proxyId, publishCapacity);
  waitingHere = () => admission.waiting;
  let subscriber: Subscriber | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let reaper: { stop(): Promise<void> } | undefined;
  let beats = 0;
  /** Releases that failed (Redis unreachable) and are retried on each heartbeat. */
  const pendingReleases: [ref: string, connectionId: string][] = [];

  const server = createServer((req, res) => void onRequest(req, res));
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void onUpgrade(req, socket, head));

  async function release(ref: string, connectionId: string, rollback: boolean): Promise<void> {
    const { browserType } = parseRef(ref);
    try {
      const [, free] = (await scripts.run('releaseConnection', {
        keys: { active: {}, lifetime: {}, freeIndex: { browserType }, leases: { proxyId } },
        args: {
          connectionId,
          nowMs: clock.now(),
          staleMs: config.staleThreshold * 1000,
          maxConcurrent: config.maxConcurrentSessions,
          maxLifetime: config.maxLifetimeSessions,
          rollback: rollback ? '1' : '0',
        },
      })) as [number, number];
      if (free === 1) await publishCapacity(browserType);
    } catch (error) {
      logger.warn('release failed; will retry', { worker: ref, error: (error as Error).message });
      if (!rollback) pendingReleases.push([ref, connectionId]);
    }
  }

  /** Seed 000: once a worker reached its lifetime limit, ask it to drain (key + publish on the same name). */
  async function sendShutdown(ref: string): Promise<void> {
    const { browserType, workerId } = parseRef(ref);
    const key = keys.shutdownCommand({ browserType, workerId });
    await backend.send(['SET', key, 'shutdown', 'EX', Math.ceil(config.shutdownCommandTtl), 'NX']);
    await backend.send(['PUBLISH', channels.shutdown!({ browserType, workerId }), 'shutdown']);
    logger.info('worker reached its lifetime limit; shutdown sent', { worker: ref });
  }

  async function onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://proxy');
    if (url.pathname !== '/') return reject(socket, 404, `no such path ${url.pathname}; connect to ws://HOST:PORT/?browser=chromium`);
    if (!authorized(req, url)) return reject(socket, 401, 'missing or wrong token');
    const browserType = url.searchParams.get('browser') ?? config.defaultBrowserType;
    if (!(browserTypes as readonly string[]).includes(browserType)) {
      return reject(socket, 400, `unknown browser "${browserType}"; expected one of ${browserTypes.join(', ')}`);
    }
    const gone = new AbortController();
    socket.once('close', () => gone.abort());
    const connectionId = randomUUID().replaceAll('-', '');
    const exclude: string[] = [];
    const started = clock.now();
    for (let attempt = 1; attempt <= config.dialAttempts; attempt++) {
      let admitted;
      try {
        admitted = await admission.acquire(browserType, connectionId, exclude, gone.signal);
      } catch (error) {
        logger.error('selection failed', { error: (error as Error).message });
        return reject(socket, 503, 'grid unavailable: cannot reach Redis', 5);
      }
      if (admitted.kind === 'full') {
        metrics.connections.inc({ browser: browserType, result: 'queue_full' });
        return reject(socket, 429, `all ${browserType} workers are busy and ${config.queueSize} clients are already waiting`, 5);
      }
      if (admitted.kind === 'timeout') {
        metrics.connections.inc({ browser: browserType, result: 'timeout' });
        return reject(socket, 503, 'No available servers', Math.max(1, Math.ceil(config.queueTimeout / 6)));
      }
      if (admitted.kind === 'gone') {
        metrics.connections.inc({ browser: browserType, result: 'client_left' });
        return;
      }
      metrics.selectSeconds.observe((clock.now() - started) / 1000);
      if (admitted.lifetime >= config.maxLifetimeSessions) void sendShutdown(admitted.ref).catch(() => {});
      let dialed;
      try {
        dialed = await dialUpgrade(admitted.endpoint, req, DIAL_TIMEOUT_MS);
      } catch (error) {
        if (!(error instanceof DialError)) throw error;
        logger.warn('dial failed; trying another worker', { worker: admitted.ref, attempt, error: error.message });
        await release(admitted.ref, connectionId, true);
        exclude.push(admitted.ref);
        continue;
      }
      if (gone.signal.aborted || socket.destroyed) {
        dialed.socket.destroy();
        await release(admitted.ref, connectionId, true);
        return;
      }
      socket.write(dialed.response);
      if (dialed.status !== 101) {
        // the worker refused the session itself (e.g. 428: client and server Playwright versions differ)
        metrics.connections.inc({ browser: browserType, result: `worker_${dialed.status}` });
        dialed.socket.destroy();
        socket.end();
        await release(admitted.ref, connectionId, true);
        return;
      }
      metrics.connections.inc({ browser: browserType, result: 'relayed' });
      metrics.relays.inc();
      const relay = pipeBoth(socket, dialed.socket, head, config.keepaliveInterval * 1000).then(async () => {
        metrics.relays.dec();
        await release(admitted.ref, connectionId, false);
      });
      relays.add(relay);
      await relay;
      relays.delete(relay);
      return;
    }
    metrics.connections.inc({ browser: browserType, result: 'dial_failed' });
    reject(socket, 502, `could not reach a ${browserType} worker after ${config.dialAttempts} attempts`);
  }

  function authorized(req: IncomingMessage, url: URL): boolean {
    if (!config.token) return true;
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    return bearer === config.token || url.searchParams.get('token') === config.token;
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const send = (status: number, body: string, type = 'application/json', extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, ...extra }).end(body);
    };
    try {
      if (url.pathname === '/status' || url.pathname === '/metrics') {
        if (!authorized(req, url)) return send(401, errorBody(401, 'missing or wrong token'));
        if (url.pathname === '/metrics') return send(200, await metrics.registry.metrics(), metrics.registry.contentType);
        const status = await gridStatus(backend, keys, {
          nowMs: clock.now(),
          staleMs: config.staleThreshold * 1000,
          maxConcurrent: config.maxConcurrentSessions,
        });
        return send(200, JSON.stringify({ proxyId, waitingHere: admission.waiting, ...status }, null, 2));
      }
      if (url.pathname === '/') {
        return send(426, errorBody(426, `Upgrade Required: connect with Playwright, e.g. chromium.connect('ws://${req.headers.host}/?browser=chromium')`), 'application/json', { upgrade: 'websocket' });
      }
      send(404, errorBody(404, `no such path ${url.pathname}`));
    } catch (error) {
      send(503, errorBody(503, `grid unavailable: ${(error as Error).message}`));
    }
  }

  async function beat(): Promise<void> {
    try {
      await backend.send(['ZADD', keys.proxyIndex(), clock.now(), proxyId]);
      while (pendingReleases.length) {
        const [ref, connectionId] = pendingReleases[0]!;
        await release(ref, connectionId, false);
        pendingReleases.shift();
      }
      if (config.adoptForeignWorkers && ++beats % ADOPT_EVERY === 1) {
        const adopted = await adoptWorkers(ctx);
        if (adopted.length) logger.info('adopted workers registered by another implementation', { workers: adopted });
      }
    } catch (error) {
      logger.warn('proxy heartbeat failed', { error: (error as Error).message });
    }
  }

  return {
    async start() {
      subscriber = await backend.subscriber();
      subscriber.onMessage(({ channel }) => {
        for (const t of browserTypes) if (channel === channels.capacity!({ browserType: t })) admission.wake(t);
      });
      await subscriber.subscribe(...browserTypes.map((t) => channels.capacity!({ browserType: t })));
      await beat();
      heartbeat = setInterval(() => void beat(), config.heartbeatInterval * 1000);
      if (config.reaperInProxy && !ctx.roles.includes('reaper')) reaper = reaperLoop(ctx);
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(new Error(error.code === 'EADDRINUSE' ? `port ${config.port} on ${config.host} is already in use` : error.message)),
        );
        server.listen(config.port, config.host, () => resolve());
      });
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      logger.info(`proxy listening on ws://${config.host}:${port}/?browser=${config.defaultBrowserType}`, { port, proxyId });
    },
    async stop() {
      server.close();
      // let open sessions finish, up to the drain timeout
      const drained = Promise.all([...relays]);
      const timeout = new AbortController();
      await Promise.race([drained, clock.sleep(config.drainTimeout * 1000, timeout.signal).catch(() => {})]);
      timeout.abort(); // no timer outlives the proxy
      for (const socket of sockets) socket.destroy();
      await drained;
      clearInterval(heartbeat);
      await reaper?.stop();
      await subscriber?.close();
      await backend.send(['ZREM', keys.proxyIndex(), proxyId]).catch(() => {});
    },
  };
}

function errorBody(code: number, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/** Answers an upgrade request with an HTTP error and closes the socket. */
function reject(socket: Socket, code: number, message: string, retryAfter?: number): void {
  const body = errorBody(code, message);
  const head = [
    `HTTP/1.1 ${code} ${REASONS[code] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...(retryAfter ? [`Retry-After: ${retryAfter}`] : []),
  ];
  if (!socket.destroyed) socket.end(head.join('\r\n') + '\r\n\r\n' + body);
}

function proxyMetrics(waitingHere: () => number) {
  const registry = new Registry();
  return {
    registry,
    connections: new Counter({ name: 'coord_grid_connections_total', help: 'Client connections by outcome', labelNames: ['browser', 'result'], registers: [registry] }),
    relays: new Gauge({ name: 'coord_grid_relays_active', help: 'Sessions this proxy relays now', registers: [registry] }),
    waiting: new Gauge({
      name: 'coord_grid_queue_waiting',
      help: 'Clients waiting at this proxy',
      registers: [registry],
      collect() {
        this.set(waitingHere());
      },
    }),
    selectSeconds: new Histogram({ name: 'coord_grid_admission_seconds', help: 'Time from connect to a chosen worker (includes queueing)', buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10, 60], registers: [registry] }),
  };
}
