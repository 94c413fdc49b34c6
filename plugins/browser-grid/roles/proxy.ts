// The proxy: the one address clients reach with
// `chromium.connect('ws://HOST:PORT/?browser=chromium')`. It admits the client
// (selecting a worker, or queueing it), relays the WebSocket to the worker
// without parsing it, and gives the capacity back when either side closes.
// This file puts the parts together and runs the heartbeat; each part is a
// file of proxy/ (upgrade.ts: a client's way through; requests.ts: /status,
// /metrics, /v1; leases.ts: the sessions relayed), admission/ and foreign/.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { announceListener, type Role, type Subscriber } from '../../../entries/plugin.ts';
import { Admission, publishCapacity } from '../admission/admission.ts';
import { gridApiKeys } from '../api-keys.ts';
import type { Ctx } from '../context.ts';
import { redisDeadline } from '../redis-deadline.ts';
import { GridError } from '../errors.ts';
import { ForeignWorkers } from '../foreign/foreign-workers.ts';
import { browserTypes } from '../refs.ts';
import { AdmissionLine } from '../proxy/admission-line.ts';
import { collectAfterBursts } from '../proxy/burst-gc.ts';
import { answerClientErrors, serverLimits } from '../proxy/client-limits.ts';
import { Leases } from '../proxy/leases.ts';
import { proxyMetrics } from '../proxy/metrics.ts';
import { ApiSessions } from '../proxy/session-api.ts';
import type { ProxyParts, RedisHealth } from '../proxy/parts.ts';
import { onRequest } from '../proxy/requests.ts';
import { onUpgrade } from '../proxy/upgrade.ts';
import { reaperLoop, reapSilentProxies } from './reaper.ts';

export function proxyRole(ctx: Ctx): Role {
  const { config, logger, keys, backend, clock, channels } = ctx;
  const proxyId = randomUUID().replaceAll('-', '');
  /** `up` is false from the moment the backend reports Redis lost until this proxy's leases are restored. */
  const redis: RedisHealth = { up: true, downSince: 0 };
  const leases = new Leases(ctx, proxyId);
  const admission = new Admission(ctx, proxyId, (ref, connectionId) => leases.release(ref, connectionId, true), () => redis.up);
  const parts = {
    ctx,
    proxyId,
    admission,
    line: new AdmissionLine(),
    leases,
    metrics: proxyMetrics(() => admission.waiting),
    foreign: new ForeignWorkers(ctx),
    redis,
    apiKeys: gridApiKeys(backend, keys),
    relays: new Set(),
    sockets: new Set(),
  } as ProxyParts;
  parts.apiSessions = new ApiSessions(parts);
  let subscriber: Subscriber | undefined;
  /** Ends the Redis-state listener: a stopped proxy's backend closing is not Redis lost. */
  let stopWatchingRedis = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let reaper: { stop(): Promise<void> } | undefined;
  let beating = false;

  const server = createServer(serverLimits, (req, res) => void onRequest(parts, req, res));
  answerClientErrors(server);
  const bursts = collectAfterBursts(server, (connections) => logger.debug('a burst of connections is over; its garbage collected', { connections }));
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void onUpgrade(parts, req, socket, head));

  /** Redis came back: leases first, then admissions, so no new client is counted against a forgotten one. */
  async function redisReturned(): Promise<void> {
    try {
      await backend.send(['ZADD', keys.proxyIndex(), clock.now(), proxyId]);
      await leases.restore();
      void parts.foreign.rewatch().catch(() => {});
      redis.up = true;
      logger.info('Redis reachable again; admitting clients', { downForMs: clock.now() - redis.downSince });
    } catch (error) {
      logger.warn('restoring leases failed; retrying on the next heartbeat', { error: (error as Error).message });
    }
  }

  async function beat(): Promise<void> {
    if (beating) return; // the last one still waits for Redis
    beating = true;
    try {
      if (!redis.up) return await redisReturned();
      await backend.send(['ZADD', keys.proxyIndex(), clock.now(), proxyId]);
      await parts.apiKeys.refresh(); // a revoked key stops working within a heartbeat
      await leases.restore();
      await leases.retryFailed();
      await parts.apiSessions.heartbeat(); // a session deleted at another proxy: its relay here closes
      // a proxy killed -9 holds its sessions' slots until someone gives them back: every live proxy looks
      const reaped = await reapSilentProxies(ctx, config.proxyTimeout * 1000);
      for (const id of reaped.proxies) logger.info('gave back the leases of a proxy that stopped heartbeating', { proxyId: id, leases: reaped.leasesReturned, silentForMoreThanS: config.proxyTimeout });
      if (reaped.leasesReturned > 0) for (const t of browserTypes) await publishCapacity(ctx, t);
      await parts.foreign.heartbeat();
    } catch (error) {
      logger.warn('proxy heartbeat failed', { error: (error as Error).message });
    } finally {
      beating = false;
    }
  }

  /** Listens on host:port; the port bound. */
  async function listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new GridError(`port ${config.port} on ${config.host} is already in use`, { code: 'COORD_ERR_BROWSER_GRID_PORT_IN_USE', cause: error })
            : new GridError(error.message, { code: 'COORD_ERR_BROWSER_GRID_LISTEN', cause: error }),
        ),
      );
      server.listen(config.port, config.host, () => resolve());
    });
    const address = server.address();
    return typeof address === 'object' && address ? address.port : config.port;
  }

  /** Starts what start() needs; a failure part-way leaves the rest to abandon(). */
  async function startParts(): Promise<void> {
      stopWatchingRedis = backend.onState((state) => {
        if (state === 'ready') {
          if (!redis.up) void redisReturned();
        } else if (redis.up) {
          redis.up = false;
          redis.downSince = clock.now();
          logger.warn('Redis unreachable; answering 503 until it returns', { state });
          admission.wakeAll();
        }
      });
      subscriber = await backend.subscriber();
      subscriber.onMessage(({ channel }) => {
        for (const t of browserTypes) if (channel === channels.capacity({ browserType: t })) admission.wake(t);
      });
      await subscriber.subscribe(...browserTypes.map((t) => channels.capacity({ browserType: t })));
      await parts.foreign.start(subscriber);
      await beat();
      heartbeat = setInterval(() => void beat(), config.heartbeatInterval * 1000);
      if (config.reaperInProxy && !ctx.roles.includes('reaper')) reaper = reaperLoop(ctx);
      const port = await listen();
      logger.info(`proxy listening on ws://${config.host}:${port}/?browser=${config.defaultBrowserType}`, { port, proxyId });
      announceListener(ctx.global, 'browser-grid', 'proxy', 'http', config.host, port);
  }

  /** A start that failed (a port in use…): the runtime calls no stop, so nothing of it may outlive it. */
  async function abandon(): Promise<void> {
    stopWatchingRedis(); // the process ends next: the backend closing then is not Redis lost
    clearInterval(heartbeat);
    bursts.stop();
    await reaper?.stop().catch(() => {});
    await subscriber?.close().catch(() => {});
    server.close();
  }

  return {
    // Stopping waits up to drainTimeout for open sessions, then closes the rest.
    stopTimeout: config.drainTimeout + 30,
    async start() {
      try {
        await startParts();
      } catch (error) {
        await abandon();
        throw error;
      }
    },
    async stop() {
      server.close();
      // let open sessions finish, up to the drain timeout
      const drained = Promise.all([...parts.relays]);
      const timeout = new AbortController();
      await Promise.race([drained, clock.sleep(config.drainTimeout * 1000, timeout.signal).catch(() => {})]);
      timeout.abort(); // no timer outlives the proxy
      for (const socket of parts.sockets) socket.destroy();
      await drained;
      clearInterval(heartbeat);
      bursts.stop();
      // Redis may be gone (the adapters hold commands until it returns): each step that waits for it is
      // bounded, or a SIGTERM to a proxy whose Redis is lost waits drainTimeout + 30 s for nothing
      await redisDeadline(reaper?.stop() ?? Promise.resolve()).catch(() => {});
      await redisDeadline(subscriber?.close() ?? Promise.resolve()).catch(() => {});
      await redisDeadline(backend.send(['ZREM', keys.proxyIndex(), proxyId])).catch(() => {});
      stopWatchingRedis();
    },
  };
}
