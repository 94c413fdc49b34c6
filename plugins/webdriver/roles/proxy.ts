// The proxy: the one URL W3C clients use (default http://127.0.0.1:4444).
// POST /session goes to a live manager; /session/{id}/* to that session's
// node (routed by session:{id}:upstream, cached, dropped when the session
// ends); BiDi WebSockets likewise; GET /status answers with the grid's
// capacity; GET /storage/{sid}/… streams a recording from a storage role
// (storage/proxy.ts). Requests and bytes are counted into the metrics keys. Commands
// for sessions it can route go through the command relay as bytes (relay/command-relay.ts);
// the rest reach the node:http server here.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { announceListener, type Role, withDeadline } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';
import { commandRelay, type Straight } from '../relay/command-relay.ts';
import { realClient, trustedProxies } from '../http/client-address.ts';
import { closeServer, listen, readBody, sendError } from '../http/serve.ts';
import { forwardHeaders, hop, type Hop } from '../http/hop.ts';
import type { RequestHead } from '../relay/http-frames.ts';
import { HttpMetrics } from '../proxy/metrics.ts';
import { GridAccess } from '../access.ts';
import { credentials, NODE_KEY_HEADER, readSessionRef, sameSecret, sentToken, sessionAllowed, sessionHandle, type SessionRef, sessionToken, UNAUTHORIZED_MESSAGE } from '../auth.ts';
import { endsSession } from '../session/ends-session.ts';
import type { OrchestratorRole } from './orchestrator.ts';
import { refuseUpgrade, relayUpgrade } from '../relay/websocket.ts';
import { answerGraphql, gridUrl } from '../views/graphql.ts';
import { gridStatus, STATUS_REDIS_TIMEOUT_MS } from '../views/status.ts';
import { isPagePath, servePage } from '../views/ui-page.ts';
import { forwardStorage, STORAGE_PATH } from '../storage/proxy.ts';
import { errorBody, W3CError } from '../errors.ts';
import { CDP_VERSION, withCdpUrl } from '../relay/cdp.ts';
import { terminateSession } from '../scripts.ts';
import { ManagerList } from '../proxy/managers.ts';
import { route, type Route } from '../proxy/route.ts';

/** How often cached routes of ended sessions are dropped. */
const ROUTE_SWEEP_MS = 60_000;
/** Selenium 3 clients still add this prefix. */
const LEGACY_PREFIX = '/wd/hub';
const SESSION_PATH = /^\/session\/([^/?]+)(\/[^?]*)?(\?.*)?$/;
/** The session WebSockets: BiDi, and CDP (Selenium Grid's se:cdp). */
const BIDI_PATH = /^\/session\/([^/]+)\/se\/(bidi|cdp)$/;
/** Answers 200 without the token and says nothing about the grid: for load balancers' health checks. */
export const HEALTH_PATH = '/healthz';

function withoutLegacyPrefix(path: string): string {
  if (path.startsWith(LEGACY_PREFIX) && (path.length === LEGACY_PREFIX.length || path[LEGACY_PREFIX.length] === '/')) return path.slice(LEGACY_PREFIX.length) || '/';
  return path;
}

/** Session ids are the grid's UUIDs (or another grid's hex ids): anything else is not one, and must not reach a key name. */
const SESSION_ID = /^[A-Za-z0-9-]{1,64}$/;

export function proxyRole(ctx: Ctx): Role {
  const { config, logger, keys, backend } = ctx;
  const routes = new Map<string, Route>();
  const metrics = new HttpMetrics(ctx);
  const managers = new ManagerList(ctx);
  /** The session's node when it serves in this process (standalone): the orchestrator here runs it. */
  const localNode = (sessionId: string) => ctx.peer<OrchestratorRole>('orchestrator')?.serving.get(sessionId);

  const server = createServer((req, res) => void onRequest(req, res).catch((error) => {
    logger.error('proxy request failed', { error: (error as Error).message });
    sendError(res, 'unknown error', (error as Error).message);
  }));
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void onUpgrade(req, socket, head));
  const trusted = trustedProxies(config.proxy.trustedProxies);
  const relay = commandRelay(server, straightRoute, { headTimeoutMs: config.proxy.headerTimeout * 1000, perClient: config.proxy.maxConnectionsPerClient, trusted });
  /** The token, the API keys as of the last heartbeat, and the secret sessions' own secrets come from. */
  const access = new GridAccess(backend, keys, config.proxy.token);
  let heartbeat: ReturnType<typeof setInterval> | undefined;

  /** HTTP requests carry the token or a key in a header (Bearer, or Basic as Selenium's http://user:TOKEN@host sends it). */
  function authorized(req: IncomingMessage): boolean {
    return credentials(access, req.headers.authorization) === 'token';
  }

  /** Reads the keys again: a revoked key is refused within a heartbeat (a failure keeps the last view). */
  const refreshAccess = () =>
    withDeadline(access.refresh(), STATUS_REDIS_TIMEOUT_MS, 'reading the API keys').catch((error) => logger.warn('cannot read the API keys; the last ones read stay', { error: (error as Error).message }));

  /**
   * A /session/{id}/… path: the session it names, whether the request may
   * reach it (the grid token or a key in a header, or no credentials and the session's
   * own secret in its id: ID.SECRET, see auth.ts), and the path with the bare id.
   */
  function sessionPath(path: string, authorization: string | undefined): { sessionId: string; allowed: boolean; path: string; rest: string; query: string } | undefined {
    const match = SESSION_PATH.exec(path);
    if (!match) return undefined;
    const [, segment, rest = '', query = ''] = match as unknown as [string, string, string?, string?];
    const ref = readSessionRef(access.secret, segment);
    const allowed = sessionAllowed(access, sentToken(authorization), ref);
    const bare = ref.secret === 'none' ? path : `/session/${ref.sessionId}${rest}${query}`;
    return { sessionId: ref.sessionId, allowed, path: bare, rest, query };
  }

  /** Is the new session's creator handed ID.SECRET? When it authenticated with Basic auth (WebdriverIO's user/key send it on POST /session only). */
  function handsSecret(req: IncomingMessage): boolean {
    return !!access.secret && /^Basic\s/i.test(req.headers.authorization ?? '');
  }

  function reply(req: IncomingMessage, res: ServerResponse, answer: Hop | { status: number; body: string }, bytesIn: number): void {
    const body = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'cache-control': 'no-cache' }).end(body);
    }
    metrics.count(req.method ?? 'GET', answer.status, bytesIn, body.length);
  }

  function fail(req: IncomingMessage, res: ServerResponse, error: W3CError, bytesIn = 0): void {
    reply(req, res, { status: error.status, body: errorBody(error.error, error.message) }, bytesIn);
  }

  /**
   * A command the relay may send as bytes: to the driver of a node in
   * this process (the session id swapped in the path), or to a remote node whose route is
   * cached. Ending a session (DELETE /session/{id}) and everything else go
   * through the server below.
   */
  function straightRoute(head: RequestHead): Straight | undefined {
    const session = sessionPath(withoutLegacyPrefix(head.target), head.headers.get('authorization'));
    if (!session?.allowed) return undefined;
    const { sessionId, rest, query, path } = session;
    const local = localNode(sessionId);
    if (local) return local.straight(head.method, rest + query, (status, body, bytesIn) => metrics.count(head.method, status, bytesIn, body.length));
    if (endsSession(head.method, rest)) return undefined;
    const target = routes.get(sessionId);
    if (!target) return undefined;
    return {
      host: target.host,
      port: target.port,
      path,
      headers: target.key ? `${NODE_KEY_HEADER}: ${target.key}\r\n` : undefined,
      answered: (status, body, bytesIn) => {
        if (status === 404 && body.includes('invalid session id')) routes.delete(sessionId);
        metrics.count(head.method, status, bytesIn, body.length);
      },
    };
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = withoutLegacyPrefix(req.url ?? '/');
    const bare = path.split('?')[0];
    // the one token-free path, for load balancers: it says the proxy runs, nothing about the grid
    if (bare === HEALTH_PATH && req.method === 'GET') return reply(req, res, { status: 200, body: '{"value":{"ready":true,"message":"proxy running"}}' }, 0);
    // the grid page takes the token as ?token= too: a browser's address bar sends no header
    if (isPagePath(req.method, bare!)) return servePage(access, req, res);
    // recordings: their own token rules (a link's token opens its file), streamed from the storage role
    if (STORAGE_PATH.test(bare!)) return metrics.count(req.method ?? 'GET', await forwardStorage(ctx, access, req, res, bare!), 0, 0);
    const session = sessionPath(path, req.headers.authorization);
    if (!(session ? session.allowed : authorized(req))) {
      res.shouldKeepAlive = false; // its body (if any) is not read
      return fail(req, res, new W3CError('unauthorized', UNAUTHORIZED_MESSAGE));
    }
    let body: Buffer;
    try {
      body = await readBody(req, config.proxy.bodyLimit, config.proxy.bodyTimeout * 1000);
    } catch (error) {
      res.shouldKeepAlive = false;
      return fail(req, res, error as W3CError);
    }
    if (bare === '/status' && req.method === 'GET') {
      const answer = { value: await gridStatus(ctx, (id, kind) => sessionSocketUrl(req, id, kind)) };
      return reply(req, res, { status: 200, body: JSON.stringify(answer) }, body.length);
    }
    if (bare === '/graphql') {
      const answer = await answerGraphql(ctx, req.method ?? 'GET', body, gridUrl(config, req.headers, `${config.proxy.host}:${config.proxy.port}`), access.secret);
      return reply(req, res, answer, body.length);
    }
    if (bare === '/session' || bare === '/session/') {
      if (req.method !== 'POST') return fail(req, res, new W3CError('unknown method', `${req.method} /session: use POST`), body.length);
      return newSession(req, res, body);
    }
    if (session && !SESSION_ID.test(session.sessionId)) return fail(req, res, new W3CError('invalid argument', `"${session.sessionId.slice(0, 80)}" is not a session id (letters, digits and dashes)`), body.length);
    if (session) return command(req, res, session.sessionId, session.path, body);
    fail(req, res, new W3CError('unknown command', `${req.method} ${bare} is not a WebDriver command this grid knows`), body.length);
  }

  /** POST /session → a live manager (the next one when one cannot be reached). */
  async function newSession(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const client = realClient(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], trusted);
    const headers = forwardHeaders(req.headers, { 'x-forwarded-for': client, 'content-type': 'application/json; charset=utf-8' });
    const tried: Route[] = [];
    for (;;) {
      const manager = await managers.next(tried);
      if (!manager) {
        const why = tried.length
          ? `no manager answered (tried ${tried.map((m) => `${m.host}:${m.port}`).join(', ')})`
          : managers.redisDown
            ? `the grid cannot reach Redis (${managers.redisDown}), and no manager is known`
            : 'no manager is running: start one with coord run --plugin webdriver --role manager';
        return fail(req, res, new W3CError('session not created', why), body.length);
      }
      tried.push(manager);
      try {
        const answer = await hop(manager, 'POST', '/session', headers, body, gone.signal);
        return reply(req, res, handedOut(answer, req), body.length);
      } catch (error) {
        if (gone.signal.aborted) return metrics.count('POST', 499, body.length, 0);
        logger.warn('manager unreachable; trying another', { manager: `${manager.host}:${manager.port}`, error: (error as Error).message });
        managers.stale();
      }
    }
  }

  /**
   * The new session as its creator is handed it: the id (ID.SECRET for Basic
   * auth, see handsSecret), and webSocketUrl and se:cdp as the client reaches this proxy: the
   * configured external URL, else X-Forwarded-Proto/Host (a TLS load balancer),
   * else the Host the client used; with the session's own token when the grid has one.
   */
  function handedOut(answer: Hop, req: IncomingMessage): Hop {
    const secret = handsSecret(req) ? access.secret : undefined;
    if (answer.status !== 200 || !(secret || answer.body.includes('"webSocketUrl"') || answer.body.includes(`"${CDP_VERSION}"`))) return answer;
    const created = JSON.parse(answer.body.toString()) as { value?: { sessionId?: string; capabilities?: Record<string, unknown> } };
    const id = created.value?.sessionId;
    const caps = created.value?.capabilities;
    if (!id || !caps || !SESSION_ID.test(id)) return answer;
    if (secret) created.value!.sessionId = sessionHandle(secret, id);
    if (typeof caps.webSocketUrl === 'string') caps.webSocketUrl = sessionSocketUrl(req, id, 'bidi');
    withCdpUrl(caps, sessionSocketUrl(req, id, 'cdp'));
    return { ...answer, body: Buffer.from(JSON.stringify(created)) };
  }

  /** A session's BiDi or CDP WebSocket as the client reaches this proxy, with the session's own token when the grid is closed. */
  function sessionSocketUrl(req: IncomingMessage, id: string, kind: 'bidi' | 'cdp'): string {
    const url = new URL(`/session/${id}/se/${kind}`, publicBase(req));
    const secret = access.secret;
    if (secret) url.searchParams.set('token', sessionToken(secret, id));
    return url.toString();
  }

  /** ws(s)://host[/prefix]/ of this proxy as the client sees it. */
  function publicBase(req: IncomingMessage): string {
    if (config.proxy.externalUrl) {
      const external = new URL(config.proxy.externalUrl);
      external.protocol = external.protocol === 'https:' || external.protocol === 'wss:' ? 'wss:' : 'ws:';
      return external.toString().replace(/\/?$/, '/');
    }
    const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
    const proto = first(req.headers['x-forwarded-proto']) === 'https' ? 'wss' : 'ws';
    const host = first(req.headers['x-forwarded-host']) || req.headers.host || `${config.proxy.host}:${config.proxy.port}`;
    return `${proto}://${host}/`;
  }

  /** Where a session's node listens: cached, so a command costs no Redis round trip. */
  async function sessionRoute(sessionId: string): Promise<Route | undefined> {
    const cached = routes.get(sessionId);
    if (cached) return cached;
    const [host, port, key] = (await backend.send(['HMGET', keys.sessionUpstream({ sessionId }), 'host', 'port', 'key'])) as (string | null)[];
    if (!host || !port) return undefined;
    const found = route(host, Number(port), key ?? '');
    routes.set(sessionId, found);
    return found;
  }

  async function ended(sessionId: string): Promise<W3CError> {
    routes.delete(sessionId);
    const active = await withDeadline(backend.send(['SISMEMBER', keys.sessionsActive(), sessionId]), STATUS_REDIS_TIMEOUT_MS).catch(() => 0);
    return new W3CError('invalid session id', active ? `session ${sessionId} is not ready yet` : `session ${sessionId} does not exist or has ended`);
  }

  /**
   * A session's node did not answer. When the session is still active and its
   * node is dead — it refuses connections (its process is gone: an inline
   * node with its orchestrator killed -9), or its heartbeat has lapsed — the
   * session ends here and its slot goes back, and the client is told so.
   */
  async function nodeGone(sessionId: string, target: Route, error: Error): Promise<W3CError> {
    routes.delete(sessionId);
    const [active, beating] = (await withDeadline(
      backend.pipeline([['SISMEMBER', keys.sessionsActive(), sessionId], ['EXISTS', keys.sessionNodeHeartbeat({ sessionId })]]),
      STATUS_REDIS_TIMEOUT_MS,
    ).catch(() => [1, 1])) as number[];
    if (!active) return new W3CError('invalid session id', `session ${sessionId} does not exist or has ended`);
    const code = (error as NodeJS.ErrnoException).code ?? ((error.cause ?? {}) as NodeJS.ErrnoException).code;
    const where = `${target.host}:${target.port}`;
    if (code !== 'ECONNREFUSED' && beating) return new W3CError('unknown error', `the node of session ${sessionId} (${where}) did not answer: ${error.message}`);
    const why = `the node of session ${sessionId} is gone (${where} ${code === 'ECONNREFUSED' ? 'refuses connections' : 'does not answer and its heartbeat has lapsed'}); the session has ended`;
    const ended = await withDeadline(terminateSession(ctx, sessionId, { component: 'proxy', code: 'TERM', meta: why, reason: 'dead' }), STATUS_REDIS_TIMEOUT_MS).catch(() => undefined);
    if (ended?.terminated) logger.warn('a session\'s node is gone; session terminated and its slot reclaimed', { sessionId, node: where, slot: ended.slot });
    return new W3CError('invalid session id', why);
  }

  /** /session/{id}/… → the session's node. */
  async function command(req: IncomingMessage, res: ServerResponse, sessionId: string, path: string, body: Buffer): Promise<void> {
    const local = localNode(sessionId);
    if (local) {
      // the node runs in this process (standalone): no socket between them
      const answer = await local.serve(req.method ?? 'GET', path, req.headers['content-type'], body);
      return reply(req, res, { status: answer.status, headers: {}, body: answer.body }, body.length);
    }
    let target: Route | undefined;
    try {
      // an uncached route is read from Redis: a Redis that does not answer gets the client an error, not a hang
      target = await withDeadline(sessionRoute(sessionId), STATUS_REDIS_TIMEOUT_MS);
    } catch (error) {
      return fail(req, res, new W3CError('unknown error', `the grid cannot reach Redis to find the node of session ${sessionId}: ${(error as Error).message}`), body.length);
    }
    if (!target) return fail(req, res, await ended(sessionId), body.length);
    let answer: Hop;
    try {
      // the node reads nothing but the body's type: the client's other headers need not cross another hop
      const type = req.headers['content-type'];
      answer = await hop(target, req.method ?? 'GET', path, type ? { 'content-type': type, [NODE_KEY_HEADER]: target.key } : { [NODE_KEY_HEADER]: target.key }, body);
    } catch (error) {
      return fail(req, res, await nodeGone(sessionId, target, error as Error), body.length);
    }
    if (answer.status === 404 && answer.body.includes('invalid session id')) routes.delete(sessionId);
    if (endsSession(req.method ?? 'GET', SESSION_PATH.exec(path)?.[2] ?? '')) routes.delete(sessionId);
    reply(req, res, answer, body.length);
  }

  /**
   * WebDriver BiDi: ws://proxy/session/{id}/se/bidi → the node (CDP's se/cdp likewise). On a closed
   * grid, the socket needs the token or a key (Authorization, or ?token=) or the session's own
   * token from its webSocketUrl; every refusal is the same 401, whatever exists.
   */
  async function onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const target = withoutLegacyPrefix(req.url ?? '/');
    const [asked = '/'] = target.split('?');
    const session = BIDI_PATH.exec(asked);
    const ref = session ? readSessionRef(access.secret, session[1]!) : undefined;
    const sessionId = ref?.sessionId;
    if (!upgradeAllowed(req.headers.authorization, target, ref)) return refuseUpgrade(socket, 401, errorBody('unauthorized', UNAUTHORIZED_MESSAGE));
    const path = ref && ref.secret !== 'none' ? `/session/${ref.sessionId}/se/${session![2]}` : asked;
    if (!sessionId) return refuseUpgrade(socket, 404, errorBody('unknown command', `no WebSocket endpoint ${path}`));
    if (!SESSION_ID.test(sessionId)) return refuseUpgrade(socket, 400, errorBody('invalid argument', 'not a session id'));
    const node = await sessionRoute(sessionId).catch(() => undefined);
    // an ended session's route may still be known (cached, or its keys not yet collected): its node is gone
    const active = !!node && (await backend.send(['SISMEMBER', keys.sessionsActive(), sessionId]).catch(() => 1)) === 1;
    if (node && !active) routes.delete(sessionId);
    if (!node || !active) return refuseUpgrade(socket, 404, errorBody('invalid session id', `session ${sessionId} does not exist or has ended`));
    await relayUpgrade(req, socket, head, { ...node, path, headers: { [NODE_KEY_HEADER]: node.key } });
  }

  /** The grid token or a key (header or ?token=), the session's own token as ?token=, or its secret in the path (ID.SECRET). */
  function upgradeAllowed(authorization: string | undefined, target: string, ref: SessionRef | undefined): boolean {
    if (!access.closed) return true;
    if (ref?.secret === 'wrong') return false;
    const sent = sentToken(authorization, target);
    if (!sent) return ref?.secret === 'right';
    const secret = access.secret;
    return access.accepts(sent) || (!!ref && !!secret && sameSecret(sent, sessionToken(secret, ref.sessionId)));
  }

  /**
   * Drops cached routes of sessions that ended without
   * this proxy seeing it (idle timeout, another proxy's DELETE). An ended
   * session keeps its status hash; one with none was lost by a Redis restarted
   * empty, and its node is about to write it back (session/restore.ts): its route stays.
   */
  async function sweepRoutes(): Promise<void> {
    const ids = [...routes.keys()];
    if (!ids.length) return;
    const replies = (await backend.pipeline(ids.flatMap((sessionId) => [['SISMEMBER', keys.sessionsActive(), sessionId], ['EXISTS', keys.sessionStatus({ sessionId })]]))) as number[];
    ids.forEach((id, i) => replies[i * 2] === 0 && replies[i * 2 + 1] === 1 && routes.delete(id));
  }
  let sweeper: ReturnType<typeof setInterval> | undefined;

  return {
    async start() {
      await refreshAccess(); // keys made before this proxy started open it from its first request
      const port = await listen(relay.server, config.proxy.host, config.proxy.port, 'webdriver proxy');
      sweeper = setInterval(() => void sweepRoutes().catch(() => {}), ROUTE_SWEEP_MS);
      heartbeat = setInterval(() => void refreshAccess(), config.heartbeat.interval * 1000);
      metrics.start();
      logger.info(`proxy listening on http://${config.proxy.host}:${port}`, { port });
      announceListener(ctx.global, 'webdriver', 'proxy', 'http', config.proxy.host, port);
    },
    async stop() {
      relay.server.close(); // no new connections while in-flight work drains
      clearInterval(sweeper);
      clearInterval(heartbeat);
      await metrics.stop();
      relay.closeAll();
      await closeServer(server);
    },
  };
}

