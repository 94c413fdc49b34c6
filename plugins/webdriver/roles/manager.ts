// The manager: serves POST /session (proxies forward it here). It queues the
// session (QUEUED), matches orchestrators by the W3C rules, waits for a slot
// from the matching orchestrators' slots.available lists (told of each slot put
// back on its own slots.freed, which it blocks on; queue timeout),
// allocates it (NALLOC), waits for scheduling (PENDING) and for the node
// (NALIVE), then answers with the W3C new-session body. Every wait is a
// blocking pop, none a poll, and all of them share one Redis connection
// (manager/blocking-waits.ts): a queue of hundreds costs no more connections than one
// request. By default the queue timeout bounds the whole request (Selenium
// Grid's session-request-timeout); manager.queueTimeout=slot keeps it to the
// wait for a slot. Every failure is `session not created` (or
// `invalid argument`), logged with its code, and leaves nothing held. A client
// that leaves while waiting is logged CLEFT. A request waits for a Redis that
// does not answer no longer than its timeouts: then it is refused naming Redis.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockingWaits } from '../manager/blocking-waits.ts';
import { ConnectionError, type Role } from '../../../entries/plugin.ts';
import type { Code } from '../session/log-codes.ts';
import { NODE_KEY_HEADER } from '../auth.ts';
import { MANAGER_HOST_TTL, type Ctx } from '../context.ts';
import { closeServer, listen, parseJson, readBody, sendError, sendJson } from '../http/serve.ts';
import { hop } from '../http/hop.ts';
import { advertisedHost } from '../http/advertised-host.ts';
import { driverRefusal } from '../node/driver-refusal.ts';
import { allocateSlot, announceSlot, appendLog, markAlive, queueSession, terminateSession } from '../scripts.ts';
import { readLog } from '../session/log.ts';
import { slotOwner } from '../session/slots.ts';
import { rfc3339 } from '../session/time.ts';
import { readTimeouts } from '../session/timeouts.ts';
import type { Timeouts } from '../config.ts';
import { capabilitySets, firstMatch, metadataOf, type Capabilities } from '../session/capabilities.ts';
import { describeOffers, liveOffers, sharedOffers } from '../manager/offers.ts';
import { SessionRefusal, W3CError } from '../errors.ts';

/** A queued request matches the live orchestrators again this often, so new ones join its match. */
const QUEUE_BLOCK_SECONDS = 5;

/** The wait for the node is split into blocks this long: a node that announced itself but did not answer /status yet is asked again. */
const NODE_BLOCK_SECONDS = 1;

/** A request whose Redis call is not answered is refused this long after its timeouts end (the flow's own refusal comes first when Redis answers). */
const REDIS_GRACE_MS = 3000;


/** The refusal of a client that left while its request waited (its session ends CLEFT). */
const leftRefusal = () => new SessionRefusal('CLEFT', new W3CError('session not created', 'client left'));

export function managerRole(ctx: Ctx): Role {
  const { config, logger, keys, backend, clock } = ctx;
  const managerId = randomUUID().replaceAll('-', '');
  const inFlight = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    const job = onRequest(req, res).catch((error) => {
      logger.error('new session failed unexpectedly', { error: (error as Error).message });
      sendError(res, 'session not created', `the manager failed: ${(error as Error).message}`);
    });
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
  });
  let port = 0;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  /** The sessions this manager is making: their heartbeats are refreshed together, one pipeline a beat (a timer each sent them one by one). */
  const beating = new Set<string>();
  let sessionBeat: ReturnType<typeof setInterval> | undefined;
  function beatSessions(): void {
    if (!beating.size) return;
    const at = rfc3339(clock.now());
    const ttl = Math.ceil(config.heartbeat.managerTtl);
    void backend.pipeline([...beating].map((sessionId) => ['SET', keys.sessionManagerHeartbeat({ sessionId }), at, 'EX', ttl])).catch(() => {});
  }
  // the slot waits block on this manager's slots.freed (the orchestrators announce every slot they put back)
  // rather than on every matching orchestrator's slots.available
  const freed = { key: keys.managerFreed({ managerId }), list: (orchestratorId: string) => keys.slotsAvailable({ orchestratorId }) };
  const waits = new BlockingWaits(backend, keys.managerWake({ managerId }), logger, freed);
  /** The live orchestrators' offers, read once a second for the whole queue. */
  const recentOffers = sharedOffers(ctx);
  /** The grid's timeouts as last read from Redis: what bounds a request while Redis does not answer. */
  let lastTimeouts: Timeouts = config.timeouts;

  /** Its heartbeat: said only while its queue loop reaches Redis too, so /status and the proxies count only a manager that can serve. */
  async function announce(): Promise<void> {
    if (!waits.healthy()) {
      logger.warn('manager queue loop has not reached Redis lately; not announcing until it does');
      return;
    }
    const host = `${advertisedHost(config.manager.host, config.manager.advertiseHost)}:${port}`;
    await backend.pipeline([
      ['SET', keys.managerHost({ managerId }), host, 'EX', MANAGER_HOST_TTL],
      ['ZADD', keys.managers(), clock.now(), managerId],
    ]);
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/session' && path !== '/session/') return sendError(res, 'unknown command', `the manager serves POST /session only, not ${req.method} ${path}`);
    if (req.method !== 'POST') return sendError(res, 'unknown method', `${req.method} /session: use POST`);
    let body: unknown;
    try {
      body = parseJson(await readBody(req, config.proxy.bodyLimit));
    } catch (error) {
      return sendError(res, error as W3CError);
    }
    const left = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) left.abort();
    });
    try {
      const answer = await createSession(req, body, left.signal);
      if (!left.signal.aborted) sendJson(res, 200, answer);
    } catch (error) {
      if (left.signal.aborted) return;
      if (error instanceof SessionRefusal) return sendError(res, error.w3c);
      throw error;
    }
  }

  /**
   * The whole New Session flow for one request, bounded: the adapters queue a
   * command while Redis is away rather than fail it, so a request whose Redis
   * call is not answered by the end of its timeouts (REDIS_GRACE_MS past them,
   * so the flow's own timeout speaks first when Redis answers) is refused
   * naming Redis, and what it started is undone if Redis comes back.
   */
  async function createSession(req: IncomingMessage, body: unknown, left: AbortSignal): Promise<object> {
    const t = lastTimeouts;
    const seconds = config.manager.queueTimeout === 'request' ? t.queue : t.queue + t.scheduling + t.nodeStartup;
    const expired = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        expired.abort();
        reject(new SessionRefusal('QTIMEOUT', new W3CError('session not created', `no session within the queue timeout (${seconds} s): the grid cannot reach Redis (a call to it was not answered)`), { code: 'COORD_ERR_WEBDRIVER_REDIS_UNREACHABLE' }));
      }, seconds * 1000 + REDIS_GRACE_MS);
    });
    const work = boundedSession(req, body, left, expired.signal);
    work.catch(() => {}); // once refused, what it says later has nobody to tell
    try {
      return await Promise.race([work, late]);
    } catch (error) {
      // an adapter that fails a command while Redis is away (node-redis: not sent within 5 s) says it at once
      if (error instanceof ConnectionError) throw new SessionRefusal('QUNAVAILABLE', new W3CError('session not created', `the grid cannot reach Redis: ${error.message}`), { code: 'COORD_ERR_WEBDRIVER_REDIS_UNREACHABLE' });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async function boundedSession(req: IncomingMessage, body: unknown, clientLeft: AbortSignal, expired: AbortSignal): Promise<object> {
    const left = AbortSignal.any([clientLeft, expired]);
    const sessionId = randomUUID();
    const started = clock.now();
    // its place in this manager's queue, kept while it waits: taken with queuedAt, before any await (the first
    // requests' scripts may come back after later ones', when EVALSHA meets NOSCRIPT and falls back to EVAL)
    const rank = waits.nextRank();
    const requested = (body as { capabilities?: unknown } | null)?.capabilities;
    await queueSession(ctx, {
      sessionId,
      requested: typeof requested === 'object' && requested !== null && !Array.isArray(requested) ? requested : { invalid: requested ?? null },
      ...metadataOf(extensionOptions(requested)),
      clientHost: clientAddress(req),
      userAgent: String(req.headers['user-agent'] ?? ''),
      meta: `manager ${managerId}`,
    });
    if (expired.aborted) {
      // Redis answered after the client was refused: the queued session ends
      await terminateSession(ctx, sessionId, { component: 'manager', code: 'QTIMEOUT', meta: 'Redis did not answer within the queue timeout' }).catch(() => {});
      throw new SessionRefusal('QTIMEOUT', new W3CError('session not created', 'refused: Redis did not answer in time'), { code: 'COORD_ERR_WEBDRIVER_REDIS_UNREACHABLE' });
    }
    beating.add(sessionId);
    expired.addEventListener('abort', () => beating.delete(sessionId), { once: true });
    try {
      return await runFlow(sessionId, started, rank, body, req, left);
    } catch (error) {
      if (expired.aborted) {
        await terminateSession(ctx, sessionId, { component: 'manager', code: 'QTIMEOUT', meta: 'Redis did not answer within the queue timeout' }).catch(() => {});
        throw error;
      }
      if (left.aborted) {
        await terminateSession(ctx, sessionId, { component: 'manager', code: 'CLEFT', meta: 'the client closed the connection while waiting' }).catch(() => {});
        logger.info('client left while waiting', { sessionId });
        throw leftRefusal();
      }
      if (!(error instanceof SessionRefusal)) await terminateSession(ctx, sessionId, { component: 'manager', meta: (error as Error).message }).catch(() => {});
      throw error;
    } finally {
      beating.delete(sessionId);
    }
  }

  async function runFlow(sessionId: string, started: number, rank: number, body: unknown, req: IncomingMessage, left: AbortSignal): Promise<object> {
    const s = { sessionId };
    const refuse = async (code: Code, error: W3CError): Promise<never> => {
      await terminateSession(ctx, sessionId, { component: 'manager', code, meta: error.message });
      throw new SessionRefusal(code, error);
    };

    // W3C capability processing, then matching against live orchestrators
    let sets: Capabilities[];
    try {
      sets = capabilitySets(body);
    } catch (error) {
      return refuse('INVALIDCAP', error as W3CError);
    }
    const pick = async (maxAgeMs?: number) => firstMatch(sets, await recentOffers(maxAgeMs));
    // matched against the offers the whole queue shares (read once a second: a request reading every
    // orchestrator's offer itself cost Redis 3 commands per orchestrator, 600 at 200 orchestrators); read
    // afresh only when they match nothing, so an orchestrator that has just started is found
    const freshPick = async () => (await pick()) ?? firstMatch(sets, await liveOffers(ctx));
    const [timeouts, firstPick] = await Promise.all([readTimeouts(ctx), freshPick()]);
    lastTimeouts = timeouts;
    // the queue timeout: by default the whole request's (Selenium Grid's session-request-timeout), else the slot wait's
    const wholeRequest = config.manager.queueTimeout === 'request';
    const requestDeadline = wholeRequest ? started + timeouts.queue * 1000 : Number.POSITIVE_INFINITY;
    const requestTimedOut = () =>
      refuse('QTIMEOUT', new W3CError('session not created', `no session within the queue timeout (${timeouts.queue} s), which covers the whole request: the wait for a slot, scheduling and node start-up`));
    const match = firstPick;
    if (!match) {
      return refuse('QUNAVAILABLE', new W3CError('session not created', `no orchestrator can satisfy the capabilities ${JSON.stringify(sets)} (offered: ${describeOffers(await liveOffers(ctx))})`));
    }

    // queue: BLPOP across the matching orchestrators' slots.available (they share one cluster slot under a hash-tag prefix)
    const deadline = wholeRequest ? requestDeadline : started + timeouts.queue * 1000;
    const listsOf = (m: NonNullable<typeof match>) => m.orchestrators.map((orchestratorId) => keys.slotsAvailable({ orchestratorId }));
    let lists = listsOf(match);
    // orchestrators that start (or stop) while it waits join its match, and it keeps its place in the queue
    // (from offers up to QUEUE_BLOCK_SECONDS old: a queue that drains re-read every orchestrator's offer each
    // second, 3 commands an orchestrator, a cost per session that grew with the fleet and the wait)
    const rematch = setInterval(() => {
      void pick(QUEUE_BLOCK_SECONDS * 1000)
        .then((found) => {
          if (!found || listsOf(found).join() === lists.join()) return;
          lists = listsOf(found);
          waits.changed();
        })
        .catch(() => {});
    }, QUEUE_BLOCK_SECONDS * 1000);
    let popped: { key: string; value: string } | null;
    try {
      popped = await waits.pop(() => lists, (deadline - clock.now()) / 1000, { signal: left, rank, announced: true });
    } finally {
      clearInterval(rematch);
    }
    if (left.aborted) {
      // a slot that came as the client left goes back first in line
      if (popped) {
        await backend.send(['LPUSH', popped.key, popped.value]).catch(() => {});
        await announceSlot(ctx, slotOwner(popped.value)!).catch(() => {});
      }
      throw leftRefusal();
    }
    if (!popped) {
      if (wholeRequest) return requestTimedOut();
      return refuse('QTIMEOUT', new W3CError('session not created', `no slot became free within the queue timeout (${timeouts.queue} s)`));
    }
    const slot = popped.value;
    const orchestratorId = slotOwner(slot)!;
    const o = { orchestratorId };
    const allocated = await allocateSlot(ctx, sessionId, orchestratorId, slot);
    if (!allocated) {
      await announceSlot(ctx, orchestratorId).catch(() => {}); // the slot went back first in line: the queue is told
      throw new SessionRefusal('CLEFT', new W3CError('session not created', 'the session ended while it waited for a slot'));
    }
    if (left.aborted) throw leftRefusal();

    // scheduling: the orchestrator puts its ID on session:ID:orchestrator (read without removing it)
    const schedulingSeconds = Math.min(timeouts.scheduling, (requestDeadline - clock.now()) / 1000);
    const scheduled = await waits.pop([keys.sessionOrchestrator(s)], schedulingSeconds, { peek: true, signal: left });
    if (left.aborted) throw leftRefusal();
    if (!scheduled) {
      if (schedulingSeconds < timeouts.scheduling) return requestTimedOut();
      return refuse('OTIMEOUT', new W3CError('session not created', `orchestrator ${orchestratorId} did not schedule the node within ${timeouts.scheduling} s`));
    }
    await appendLog(ctx, sessionId, 'manager', 'PENDING', `scheduled by ${scheduled.value}`);

    // node startup: the node pushes its host:port onto session:ID:ready once it serves, and a session that
    // ends first gets 'ended' there, so the manager waits in a blocking pop rather than polling; then the
    // node's /status must answer
    const nodeDeadline = Math.min(clock.now() + timeouts.nodeStartup * 1000, requestDeadline);
    let upstream: { host: string; port: number } | undefined;
    let actualJson: string | null = null;
    let stamps: (string | null)[] = [];
    while (!upstream) {
      const remaining = (nodeDeadline - clock.now()) / 1000;
      if (remaining <= 0) {
        if (nodeDeadline === requestDeadline) return requestTimedOut();
        return refuse('NTIMEOUT', new W3CError('session not created', `the node did not become responsive within ${timeouts.nodeStartup} s`));
      }
      await waits.pop([keys.sessionReady(s)], Math.min(remaining, NODE_BLOCK_SECONDS), { signal: left });
      if (left.aborted) throw leftRefusal();
      // everything NALIVE and the answer need, in one round trip
      const [active, fields, actual, status] = (await backend.pipeline([
        ['SISMEMBER', keys.sessionsActive(), sessionId],
        ['HMGET', keys.sessionUpstream(s), 'host', 'port', 'key'],
        ['HGET', keys.sessionCapabilities(s), 'actual'],
        ['HMGET', keys.sessionStatus(s), 'queuedAt', 'pendingAt'],
      ])) as [number, (string | null)[], string | null, (string | null)[]];
      if (active === 0) throw new SessionRefusal('NTIMEOUT', await whyEnded(sessionId));
      if (!fields[0] || !fields[1]) continue;
      const target = { host: fields[0], port: Number(fields[1]) };
      const answer = await hop(target, 'GET', '/status', { [NODE_KEY_HEADER]: fields[2] ?? '' }, undefined, undefined, 2000).catch(() => undefined);
      if (answer?.status === 200 && (JSON.parse(answer.body.toString()) as { value?: { ready?: boolean } }).value?.ready) {
        upstream = target;
        actualJson = actual;
        stamps = status;
      }
    }

    const alive = await markAlive(ctx, sessionId, `node ${upstream.host}:${upstream.port}`, { queuedAt: stamps[0] ?? null, pendingAt: stamps[1] ?? null });
    if (!alive) throw new SessionRefusal('NTIMEOUT', await whyEnded(sessionId));
    const actual = JSON.parse(actualJson ?? '{}') as Capabilities;
    if (typeof actual.webSocketUrl === 'string') actual.webSocketUrl = `ws://${req.headers['x-forwarded-host'] ?? req.headers.host}/session/${sessionId}/se/bidi`;
    logger.info('session created', { sessionId, orchestratorId, slot, ms: clock.now() - started });
    return { value: { sessionId, capabilities: actual } };
  }

  /** The failure the session's log recorded (the node's or orchestrator's reason). */
  async function whyEnded(sessionId: string): Promise<W3CError> {
    const log = await readLog(ctx, sessionId).catch(() => []);
    const failure = log.find((e) => e.level === 'fail'); // the first failure is the cause; later ones follow from it
    // chromedriver's own refusal reaches the client as chromedriver gave it: status, error and message
    const refused = failure?.code === 'DFAILURE' ? driverRefusal(failure.meta) : undefined;
    return refused ?? new W3CError('session not created', failure ? `${failure.code}: ${failure.meta}` : 'the session ended before its node was ready');
  }

  return {
    async start() {
      lastTimeouts = await readTimeouts(ctx);
      waits.start();
      port = await listen(server, config.manager.host, config.manager.port, 'webdriver manager');
      await announce();
      sessionBeat = setInterval(beatSessions, config.heartbeat.interval * 1000);
      heartbeat = setInterval(() => void announce().catch((error) => logger.warn('manager heartbeat failed', { error: (error as Error).message })), config.heartbeat.interval * 1000);
      logger.info('manager ready', { managerId, port });
    },
    async stop() {
      clearInterval(heartbeat);
      server.close(); // no new connections while in-flight work drains
      await Promise.allSettled([...inFlight]);
      clearInterval(sessionBeat); // after the drain: the sessions still being made keep their heartbeats
      await waits.stop();
      await backend.pipeline([['DEL', keys.managerHost({ managerId })], ['ZREM', keys.managers(), managerId]]).catch(() => {});
      await closeServer(server);
    },
  };
}

/** Extension capabilities of alwaysMatch (where clients put names and builds). */
function extensionOptions(requested: unknown): Capabilities {
  const always = (requested as { alwaysMatch?: unknown } | undefined)?.alwaysMatch;
  return typeof always === 'object' && always !== null ? (always as Capabilities) : {};
}

function clientAddress(req: IncomingMessage): string {
  const forwarded = req.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first || req.socket.remoteAddress || '';
}
