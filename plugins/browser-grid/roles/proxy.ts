// The proxy: the one address clients reach with
// `chromium.connect('ws://HOST:PORT/?browser=chromium')`. It admits the client
// (selecting a worker, or queueing it), relays the WebSocket to the worker
// without parsing it, and gives the capacity back when either side closes.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Role } from '../../../core/plugin.ts';
import type { Subscriber } from '../../../core/backend.ts';
import { Admission } from '../admission/admission.ts';
import { REDIS_CALL_MS, withDeadline } from '../deadline.ts';
import { adoptRefs, adoptWorkers, fileVersion } from '../foreign/adopt.ts';
import { onDemandAllows } from '../config.ts';
import { awaitVersion } from '../admission/versions-on-demand.ts';
import { browserTypes, clientVersion, parseRef, type BrowserType } from '../refs.ts';
import { dialUpgrade, DialError, pipeBoth } from '../relay/relay.ts';
import { dialLeased, onThisHost } from '../cdp/lease.ts';
import { answerClientErrors, collectAfterBursts, FIRST_MESSAGE_MS, handshakeProblem, serverLimits } from '../proxy/client-limits.ts';
import { gridStatus } from '../status.ts';
import { isRestPath, restResource } from '../proxy/rest-api.ts';
import { enableNotifications, watchWorkers } from '../foreign/watch.ts';
import { reaperLoop, reapSilentProxies } from './reaper.ts';
import type { Ctx } from '../context.ts';
import { announceListener } from '../../../core/run-files.ts';

const DIAL_TIMEOUT_MS = 10_000;
/** A SCAN for foreign workers runs every this many heartbeats: often without keyspace notifications, rarely (a safety net) with them. */
const SCAN_EVERY = 2;
const SCAN_EVERY_NOTIFIED = 12;

export function proxyRole(ctx: Ctx): Role {
  const { config, logger, scripts, keys, backend, clock } = ctx;
  const proxyId = randomUUID().replaceAll('-', '');
  const { channels } = ctx;
  const relays = new Set<Promise<void>>();
  const sockets = new Set<Socket>();
  let waitingHere = () => 0;
  const metrics = proxyMetrics(() => waitingHere());
  const publishCapacity = async (browserType: string) => {
    await backend.send(['PUBLISH', channels.capacity({ browserType }), '*']);
  };
  /** False from the moment the backend reports Redis lost until this proxy's leases are restored. */
  let redisUp = true;
  let redisDownSince = 0;
  /** The sessions this proxy relays now: connection id → worker ref (what restoreLeases files again). */
  const live = new Map<string, string>();
  /** When each of those sessions started (ms), for /v1/sessions. */
  const startedHere = new Map<string, number>();
  const admission = new Admission(ctx, proxyId, publishCapacity, (ref, connectionId) => release(ref, connectionId, true), () => redisUp);
  waitingHere = () => admission.waiting;
  let subscriber: Subscriber | undefined;
  /** Ends the Redis-state listener: a stopped proxy's backend closing is not Redis lost. */
  let stopWatchingRedis = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let reaper: { stop(): Promise<void> } | undefined;
  let beats = 0;
  let beating = false;
  /** Keyspace notifications on: new workers and removed ones are seen at once. */
  let notified = false;
  /** Worker refs known to be in the indexes (or being adopted), so a heartbeat's HSET costs nothing. */
  const known = new Set<string>();
  /** Releases that failed (Redis unreachable) and are retried on each heartbeat. */
  const pendingReleases: [ref: string, connectionId: string][] = [];

  const server = createServer(serverLimits, (req, res) => void onRequest(req, res));
  answerClientErrors(server);
  const bursts = collectAfterBursts(server);
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void onUpgrade(req, socket, head));

  async function release(ref: string, connectionId: string, rollback: boolean): Promise<void> {
    const { browserType } = parseRef(ref);
    try {
      const [, free] = (await withDeadline(scripts.run('releaseConnection', {
        keys: { active: {}, lifetime: {}, freeIndex: { browserType }, leases: { proxyId }, versions: { browserType } },
        args: {
          connectionId,
          nowMs: clock.now(),
          staleMs: config.staleThreshold * 1000,
          maxConcurrent: config.maxConcurrentSessions,
          maxLifetime: config.maxLifetimeSessions,
          rollback: rollback ? '1' : '0',
        },
      }), REDIS_CALL_MS)) as [number, number];
      if (free === 1) await publishCapacity(browserType);
    } catch (error) {
      // a lease is given back at most once, so retrying is safe even if the first call lands late
      logger.warn('release failed; will retry', { worker: ref, error: (error as Error).message });
      pendingReleases.push([ref, connectionId]);
    }
  }

  /** Files again every session this proxy relays whose lease Redis lost (it restarted empty). */
  async function restoreLeases(): Promise<void> {
    if (!live.size) return;
    const snapshot = [...live];
    const restored = (await withDeadline(
      scripts.run('restoreLeases', { keys: { active: {}, leases: { proxyId } }, args: { sessions: snapshot.flat() } }),
      REDIS_CALL_MS,
    )) as string[];
    if (!restored.length) return;
    logger.info('restored leases Redis had lost', { sessions: restored.length });
    // a session that ended while the call was in flight is given back again
    const sent = new Map(snapshot);
    for (const connectionId of restored) {
      if (!live.has(connectionId)) await release(sent.get(connectionId)!, connectionId, false);
    }
  }

  /** A worker's hash was written: a worker registered by another implementation is adopted at once. */
  async function workerWritten(ref: string): Promise<void> {
    if (known.has(ref)) return;
    known.add(ref);
    try {
      const adopted = await adoptRefs(ctx, [ref]);
      if (adopted.length) {
        logger.info('adopted workers registered by another implementation', { workers: adopted });
        await publishCapacity(parseRef(ref).browserType);
      }
    } catch (error) {
      known.delete(ref); // tried again on its next heartbeat
      logger.warn('adopting a worker failed', { worker: ref, error: (error as Error).message });
    }
  }

  /** A worker's hash was deleted or expired: its counter fields and index entries go with it. */
  async function workerGone(ref: string): Promise<void> {
    known.delete(ref);
    const { browserType, workerId } = parseRef(ref);
    await scripts
      .run('removeWorker', {
        keys: { worker: { browserType, workerId }, active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType }, versions: { browserType } },
        args: { ref },
      })
      .catch((error) => logger.warn('removing a departed worker failed', { worker: ref, error: (error as Error).message }));
  }

  /** Keyspace notifications (again after a Redis restart, which forgets them) and one SCAN for workers registered meanwhile. */
  async function watchForeignWorkers(): Promise<void> {
    if (!config.adoptForeignWorkers) return;
    known.clear();
    notified = await enableNotifications(ctx);
    const adopted = await adoptWorkers(ctx);
    if (adopted.length) logger.info('adopted workers registered by another implementation', { workers: adopted });
  }

  /** Redis came back: leases first, then admissions, so no new client is counted against a forgotten one. */
  async function redisReturned(): Promise<void> {
    try {
      await ctx.backend.send(['ZADD', keys.proxyIndex(), clock.now(), proxyId]);
      await restoreLeases();
      void watchForeignWorkers().catch(() => {});
      redisUp = true;
      logger.info('Redis reachable again; admitting clients', { downForMs: clock.now() - redisDownSince });
    } catch (error) {
      logger.warn('restoring leases failed; retrying on the next heartbeat', { error: (error as Error).message });
    }
  }

  /** As playwright-distributed does: once a worker reached its lifetime limit, ask it to drain (key + publish on the same name). */
  async function sendShutdown(ref: string): Promise<void> {
    const { browserType, workerId } = parseRef(ref);
    const key = keys.shutdownCommand({ browserType, workerId });
    await backend.send(['SET', key, 'shutdown', 'EX', Math.ceil(config.shutdownCommandTtl), 'NX']);
    await backend.send(['PUBLISH', channels.shutdown({ browserType, workerId }), 'shutdown']);
    logger.info('worker reached its lifetime limit; shutdown sent', { worker: ref });
  }

  async function onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    // Read the client while it waits, so a client that hangs up is seen at once (its queue
    // place and slot given back) rather than at its next write; a WebSocket client sends
    // nothing before its 101, and anything it did send goes to the worker after it.
    let early = Buffer.alloc(0);
    const hold = (chunk: Buffer) => (early = Buffer.concat([early, chunk]));
    const hungUp = () => socket.destroy();
    socket.on('data', hold);
    socket.once('end', hungUp);
    const url = new URL(req.url ?? '/', 'http://proxy');
    const protocol = url.pathname === '/cdp' ? 'cdp' : 'playwright';
    if (url.pathname !== '/' && protocol !== 'cdp') {
      return reject(socket, 404, `no such path ${url.pathname}; connect to ws://HOST:PORT/?browser=chromium (Playwright) or ws://HOST:PORT/cdp (Puppeteer, connectOverCDP)`);
    }
    if (!authorized(req, url)) return reject(socket, 401, 'missing or wrong token');
    const problem = handshakeProblem(req);
    if (problem) return reject(socket, problem.code, problem.message, undefined, undefined, problem.code === 426 ? ['Sec-WebSocket-Version: 13'] : []);
    if (!redisUp) return reject(socket, 503, 'grid unavailable: cannot reach Redis', 5);
    const browserType = protocol === 'cdp' ? 'chromium' : (url.searchParams.get('browser') ?? config.defaultBrowserType);
    if (!(browserTypes as readonly string[]).includes(browserType)) {
      return reject(socket, 400, `unknown browser "${browserType}"; expected one of ${browserTypes.join(', ')}`);
    }
    // the DevTools protocol does not depend on the client's Playwright version
    const version = protocol === 'cdp' ? '' : clientVersion(req.headers['user-agent']);
    const gone = new AbortController();
    socket.once('close', () => gone.abort());
    const connectionId = randomUUID().replaceAll('-', '');
    const exclude: string[] = [];
    const started = clock.now();
    /** The last answer a worker refused the session with, forwarded when no other worker took it. */
    let refusal: Buffer | undefined;
    /** versionsOnDemand was asked for the client's version (once per client); `unclaimed`: no worker process allows it. */
    let askedOnDemand = false;
    let unclaimed = false;
    for (let attempt = 1; attempt <= config.dialAttempts; attempt++) {
      let admitted;
      try {
        admitted = await admission.acquire(browserType, version, connectionId, exclude, gone.signal, protocol);
      } catch (error) {
        logger.error('selection failed', { error: (error as Error).message });
        return reject(socket, 503, 'grid unavailable: cannot reach Redis', 5);
      }
      if (admitted.kind === 'absent') {
        metrics.connections.inc({ browser: browserType, result: 'no_worker' });
        const what = protocol === 'cdp' ? 'Chromium worker serving CDP (browser-grid.cdp)' : `${browserType} worker`;
        return reject(socket, 503, `No available servers: no ${what} is registered in the grid`, 5);
      }
      if (admitted.kind === 'noversion' && !askedOnDemand && onDemandAllows(config, version)) {
        askedOnDemand = true;
        // versionsOnDemand: a worker process starts servers of this version while the client waits
        let outcome;
        try {
          outcome = await awaitVersion(ctx, browserType as BrowserType, version, started + config.queueTimeout * 1000, gone.signal);
        } catch (error) {
          logger.error('asking for a Playwright version on demand failed', { error: (error as Error).message });
          return reject(socket, 503, 'grid unavailable: cannot reach Redis', 5);
        }
        if (outcome.kind === 'gone') return;
        if (outcome.kind === 'started') {
          attempt--; // the wait used no dial attempt
          continue;
        }
        if (outcome.kind === 'failed') {
          metrics.connections.inc({ browser: browserType, result: 'on_demand_failed' });
          return reject(socket, 503, `Playwright ${version} could not be started on demand: ${outcome.why}`, 10);
        }
        if (outcome.kind === 'timeout') {
          metrics.connections.inc({ browser: browserType, result: 'timeout' });
          return reject(socket, 503, `No available servers: Playwright ${version} servers did not start within the queue timeout (${config.queueTimeout}s)`, 5);
        }
        unclaimed = true;
      }
      if (admitted.kind === 'noversion') {
        metrics.connections.inc({ browser: browserType, result: 'no_version' });
        const served = admitted.versions.length ? `its ${browserType} workers speak Playwright ${admitted.versions.join(', ')}` : `no ${browserType} worker has a known Playwright version yet`;
        const newest = admitted.versions.at(-1);
        return reject(socket, 428, `Playwright ${version} is not served by this grid: ${served}. Connect with a client of a served version${newest ? ` (e.g. npm i -D playwright@${newest})` : ''}.${unclaimed ? ` No worker process started it on demand: none allows ${version} in browser-grid.versionsOnDemand.` : ''}`, undefined, { clientVersion: version, versions: admitted.versions });
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
      if (gone.signal.aborted) {
        // it hung up while its worker was chosen: given back before a dial is spent on it
        metrics.connections.inc({ browser: browserType, result: 'client_left' });
        return void (await release(admitted.ref, connectionId, true));
      }
      metrics.selectSeconds.observe((clock.now() - started) / 1000);
      let dialed;
      try {
        // a CDP client of a worker on this host is connected straight to its browser: one relay, not two
        const leasing = protocol === 'cdp' && config.cdpDirect && onThisHost(admitted.endpoint);
        dialed = await (leasing ? dialLeased : dialUpgrade)(admitted.endpoint, req, DIAL_TIMEOUT_MS);
      } catch (error) {
        if (!(error instanceof DialError)) throw error;
        await release(admitted.ref, connectionId, true);
        exclude.push(admitted.ref);
        if (error.code === 'ECONNREFUSED') {
          // Nothing listens there: its process is gone. It leaves the grid now, for every
          // proxy (its counters with it), rather than when its heartbeat goes stale; a live
          // one registers again at its next heartbeat. Such a dial uses no attempt.
          logger.warn('worker refused the connection: removed from the grid; trying another', { worker: admitted.ref, error: error.message });
          await workerGone(admitted.ref);
          attempt--;
          continue;
        }
        logger.warn('dial failed; trying another worker', { worker: admitted.ref, attempt, error: error.message });
        continue;
      }
      if (gone.signal.aborted || socket.destroyed) {
        dialed.socket.destroy();
        await release(admitted.ref, connectionId, true);
        return;
      }
      if (dialed.status !== 101) {
        // The worker refused the session itself (428: its Playwright version is not the client's).
        // Given back whole, so it is not penalised; the client tries the next worker of its version.
        metrics.connections.inc({ browser: browserType, result: `worker_${dialed.status}` });
        dialed.socket.destroy();
        await release(admitted.ref, connectionId, true);
        exclude.push(admitted.ref);
        refusal = dialed.response;
        const spoken = /server version: v(\d+\.\d+)/.exec(dialed.response.toString('utf8'))?.[1];
        logger.warn('worker refused the session; trying another', { worker: admitted.ref, status: dialed.status, clientVersion: version, serverVersion: spoken });
        if (spoken) await fileVersion(ctx, admitted.ref, spoken).catch(() => {});
        continue;
      }
      socket.off('data', hold).off('end', hungUp);
      socket.pause();
      socket.write(dialed.response);
      metrics.connections.inc({ browser: browserType, result: 'relayed' });
      if (protocol === 'cdp') metrics.cdpSessions.inc({ path: 'lease' in dialed ? 'direct' : 'worker' });
      metrics.relays.inc();
      live.set(connectionId, admitted.ref);
      startedHere.set(connectionId, clock.now());
      // A session counts once the client speaks: one that hangs up before its first message
      // (a churned connect) is rolled back whole, so it can neither use up nor recycle a worker.
      let used = false;
      // an upgraded client that never speaks would hold its slot: it has FIRST_MESSAGE_MS to
      const silent = setTimeout(() => socket.destroy(), FIRST_MESSAGE_MS);
      const firstMessage = () => {
        used = true;
        clearTimeout(silent);
        if (admitted.lifetime >= config.maxLifetimeSessions) void sendShutdown(admitted.ref).catch(() => {});
      };
      const relay = pipeBoth(socket, dialed.socket, Buffer.concat([head, early]), config.keepaliveInterval * 1000, firstMessage).then(async () => {
        clearTimeout(silent);
        metrics.relays.dec();
        live.delete(connectionId);
        startedHere.delete(connectionId);
        await release(admitted.ref, connectionId, !used);
      });
      relays.add(relay);
      await relay;
      relays.delete(relay);
      return;
    }
    if (refusal) {
      if (!socket.destroyed) socket.end(refusal);
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
      if (isRestPath(url.pathname)) {
        // playwright-distributed's REST API (read side): rest-api.ts
        if (!authorized(req, url)) return send(401, errorBody(401, 'missing or wrong token'));
        if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, errorBody(405, `${req.method} ${url.pathname}: only GET is served`), 'application/json', { allow: 'GET, HEAD' });
        if (!redisUp) return send(503, errorBody(503, 'grid unavailable: cannot reach Redis'), 'application/json', { 'retry-after': '5' });
        const rest = { backend, keys, nowMs: clock.now(), staleMs: config.staleThreshold * 1000, maxConcurrent: config.maxConcurrentSessions, maxQueueSize: config.queueSize, proxyId, waitingHere: admission.waiting, startedHere };
        return send(200, JSON.stringify(await withDeadline(restResource(url.pathname, rest), REDIS_CALL_MS), null, 2));
      }
      if (url.pathname === '/status' || url.pathname === '/metrics') {
        if (!authorized(req, url)) return send(401, errorBody(401, 'missing or wrong token'));
        if (url.pathname === '/metrics') return send(200, await metrics.registry.metrics(), metrics.registry.contentType);
        if (!redisUp) {
          const body = { error: { code: 503, message: 'grid unavailable: cannot reach Redis' }, proxyId, redis: 'unreachable', redisDownForMs: clock.now() - redisDownSince, relaying: live.size };
          return send(503, JSON.stringify(body, null, 2), 'application/json', { 'retry-after': '5' });
        }
        const status = await withDeadline(
          gridStatus(backend, keys, { nowMs: clock.now(), staleMs: config.staleThreshold * 1000, maxConcurrent: config.maxConcurrentSessions }),
          REDIS_CALL_MS,
        );
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
    if (beating) return; // the last one still waits for Redis
    beating = true;
    const burst = bursts.settle();
    if (burst) logger.debug('a burst of connections is over; its garbage collected', { connections: burst });
    try {
      if (!redisUp) return await redisReturned();
      await backend.send(['ZADD', keys.proxyIndex(), clock.now(), proxyId]);
      await restoreLeases();
      for (const [ref, connectionId] of pendingReleases.splice(0)) await release(ref, connectionId, false);
      // a proxy killed -9 holds its sessions' slots until someone gives them back: every live proxy looks
      const reaped = await reapSilentProxies(ctx, config.proxyTimeout * 1000);
      for (const id of reaped.proxies) logger.info('gave back the leases of a proxy that stopped heartbeating', { proxyId: id, leases: reaped.leasesReturned, silentForMoreThanS: config.proxyTimeout });
      if (reaped.leasesReturned > 0) for (const t of browserTypes) await publishCapacity(t);
      if (config.adoptForeignWorkers && ++beats % (notified ? SCAN_EVERY_NOTIFIED : SCAN_EVERY) === 0) {
        const adopted = await adoptWorkers(ctx);
        if (adopted.length) logger.info('adopted workers registered by another implementation', { workers: adopted });
      }
    } catch (error) {
      logger.warn('proxy heartbeat failed', { error: (error as Error).message });
    } finally {
      beating = false;
    }
  }

  return {
    async start() {
      stopWatchingRedis = backend.onState((state) => {
        if (state === 'ready') {
          if (!redisUp) void redisReturned();
        } else if (redisUp) {
          redisUp = false;
          redisDownSince = clock.now();
          logger.warn('Redis unreachable; answering 503 until it returns', { state });
          admission.wakeAll();
        }
      });
      subscriber = await backend.subscriber();
      subscriber.onMessage(({ channel }) => {
        for (const t of browserTypes) if (channel === channels.capacity({ browserType: t })) admission.wake(t);
      });
      await subscriber.subscribe(...browserTypes.map((t) => channels.capacity({ browserType: t })));
      if (config.adoptForeignWorkers) {
        await watchWorkers(ctx, subscriber, { written: (ref) => void workerWritten(ref), gone: (ref) => void workerGone(ref) });
        await watchForeignWorkers();
        // An in-process backend has no notifications to turn on and no other implementation writing to it: nothing to say.
        if (!notified && ctx.backend.capabilities.reconnect) logger.info('keyspace notifications unavailable (CONFIG SET refused): foreign workers are found by a SCAN every 2 heartbeats');
      }
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
      announceListener(ctx.global, 'browser-grid', 'proxy', 'http', config.host, port);
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
      stopWatchingRedis();
    },
  };
}

function errorBody(code: number, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: { code, message, ...extra } });
}

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 426: 'Upgrade Required', 428: 'Precondition Required', 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

/** Answers an upgrade request with an HTTP error and closes the socket. */
function reject(socket: Socket, code: number, message: string, retryAfter?: number, extra?: Record<string, unknown>, headers: string[] = []): void {
  const body = errorBody(code, message, extra);
  const head = [
    `HTTP/1.1 ${code} ${REASONS[code] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...(retryAfter ? [`Retry-After: ${retryAfter}`] : []),
    ...headers,
  ];
  if (!socket.destroyed) socket.end(head.join('\r\n') + '\r\n\r\n' + body);
}

function proxyMetrics(waitingHere: () => number) {
  const registry = new Registry();
  return {
    registry,
    connections: new Counter({ name: 'coord_grid_connections_total', help: 'Client connections by outcome', labelNames: ['browser', 'result'], registers: [registry] }),
    cdpSessions: new Counter({ name: 'coord_grid_cdp_sessions_total', help: 'CDP sessions by path: direct (to the browser, leased from a worker on this host) or worker (relayed by its CDP port)', labelNames: ['path'], registers: [registry] }),
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
