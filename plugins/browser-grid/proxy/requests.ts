// The proxy's plain HTTP requests: /status (the grid as JSON), /metrics
// (Prometheus), playwright-distributed's REST API (/v1/…, rest-api.ts; its
// errors RFC 9457 problems), its probes /healthz (the process answers) and
// /readyz (Redis answers too), and a 426 on / for a client that did not ask
// for a WebSocket.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { redisDeadline } from '../redis-deadline.ts';
import { gridStatus } from '../status.ts';
import { errorBody, PROBLEM_TYPE, problemBody, tokenAccepted } from './answers.ts';
import type { ProxyParts } from './parts.ts';
import { isRestPath, REST_PATHS, restResource } from './rest-api.ts';
import type { Reply } from './session-api.ts';
import { isSessionId } from './session-records.ts';
import { nextLink, statusPage } from './status-page.ts';

export async function onRequest(parts: ProxyParts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx, proxyId, admission, leases, metrics, redis } = parts;
  const { config, backend, keys, clock } = ctx;
  const url = new URL(req.url ?? '/', 'http://proxy');
  const send = (status: number, body: string, type = 'application/json', extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, ...extra }).end(body);
  };
  try {
    // Probes answer without the token, as Kubernetes sends none.
    if (url.pathname === '/healthz') return send(200, JSON.stringify({ status: 'ok' }));
    if (url.pathname === '/readyz') {
      const reachable = redis.up && (await redisDeadline(backend.send(['PING'])).then(() => true, () => false));
      if (reachable) return send(200, JSON.stringify({ status: 'ready', redis: 'reachable' }));
      return send(503, problemBody(503, 'not ready: cannot reach Redis', url.pathname), PROBLEM_TYPE, { 'retry-after': '5' });
    }
    if (url.pathname === '/v1' || url.pathname.startsWith('/v1/')) {
      const problem = (status: number, detail: string, extra: Record<string, string> = {}) => send(status, problemBody(status, detail, url.pathname), PROBLEM_TYPE, extra);
      if (!tokenAccepted(config.token, req, url, parts.apiKeys)) return problem(401, 'missing or wrong token');
      const sessionRoute = url.pathname === '/v1/sessions' ? (req.method === 'POST' ? 'create' : undefined) : sessionIdOf(url.pathname);
      if (sessionRoute) {
        if (!redis.up) return problem(503, 'grid unavailable: cannot reach Redis', { 'retry-after': '5' });
        const reply = await sessionReply(parts, req, sessionRoute);
        if (!reply) return void res.destroy(); // the client left while it waited for a slot
        if (reply.problem) return problem(reply.status, reply.problem, reply.headers);
        if (reply.body === undefined) return void res.writeHead(reply.status, reply.headers).end();
        return send(reply.status, JSON.stringify(reply.body, null, 2), 'application/json', reply.headers);
      }
      if (!isRestPath(url.pathname)) return problem(404, `no such resource ${url.pathname}: the API serves ${REST_PATHS.join(', ')} and /v1/sessions/{id}`);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        const sessions = url.pathname === '/v1/sessions';
        return problem(405, `${req.method} ${url.pathname}: only ${sessions ? 'GET and POST are' : 'GET is'} served`, { allow: sessions ? 'GET, HEAD, POST' : 'GET, HEAD' });
      }
      if (!redis.up) return problem(503, 'grid unavailable: cannot reach Redis', { 'retry-after': '5' });
      const rest = {
        backend, keys, scripts: ctx.scripts, nowMs: clock.now(), staleMs: config.staleThreshold * 1000, maxConcurrent: config.maxConcurrentSessions, maxQueueSize: config.queueSize,
        proxyId, waitingHere: admission.waiting, startedHere: leases.startedHere, base: connectBase(req, config),
      };
      try {
        return send(200, JSON.stringify(await redisDeadline(restResource(url.pathname, rest)), null, 2));
      } catch (error) {
        return problem(503, `grid unavailable: ${(error as Error).message}`, { 'retry-after': '5' });
      }
    }
    if (url.pathname === '/status' || url.pathname === '/metrics') {
      if (!tokenAccepted(config.token, req, url, parts.apiKeys)) return send(401, errorBody(401, 'missing or wrong token'));
      if (url.pathname === '/metrics') return send(200, await metrics.registry.metrics(), metrics.registry.contentType);
      if (!redis.up) {
        const body = { error: { code: 503, message: 'grid unavailable: cannot reach Redis' }, proxyId, redis: 'unreachable', redisDownForMs: clock.now() - redis.downSince, relaying: leases.size };
        return send(503, JSON.stringify(body, null, 2), 'application/json', { 'retry-after': '5' });
      }
      const page = statusPage(url);
      if ('problem' in page) return send(400, errorBody(400, page.problem));
      const opts = { nowMs: clock.now(), staleMs: config.staleThreshold * 1000, maxConcurrent: config.maxConcurrentSessions, ...page };
      const { workers, types, nextAfter } = await redisDeadline(gridStatus(ctx, opts));
      return send(200, JSON.stringify({ proxyId, waitingHere: admission.waiting, workers, types, next: nextLink(nextAfter, page.limit) }, null, 2));
    }
    if (url.pathname === '/') {
      return send(426, errorBody(426, `Upgrade Required: connect with Playwright, e.g. chromium.connect('ws://${req.headers.host}/?browser=chromium')`), 'application/json', { upgrade: 'websocket' });
    }
    send(404, errorBody(404, `no such path ${url.pathname}`));
  } catch (error) {
    send(503, errorBody(503, `grid unavailable: ${(error as Error).message}`));
  }
}

/** The session id of /v1/sessions/{id}, or undefined for another path. */
function sessionIdOf(pathname: string): string | undefined {
  return /^\/v1\/sessions\/([^/]+)$/.exec(pathname)?.[1];
}

/** POST /v1/sessions, or GET / DELETE /v1/sessions/{id} (session-api.ts); undefined when the client left. */
async function sessionReply(parts: ProxyParts, req: IncomingMessage, route: string): Promise<Reply | undefined> {
  const base = connectBase(req, parts.ctx.config);
  if (route !== 'create' && !isSessionId(route)) {
    return { status: 404, problem: `no session ${route}: session ids are UUIDs, as POST /v1/sessions returns them` };
  }
  try {
    if (route === 'create') return await parts.apiSessions.create(req, base);
    if (req.method === 'GET' || req.method === 'HEAD') return await parts.apiSessions.read(route, base);
    if (req.method === 'DELETE') return await parts.apiSessions.remove(route);
    return { status: 405, problem: `${req.method} /v1/sessions/${route}: GET, HEAD and DELETE are served`, headers: { allow: 'GET, HEAD, DELETE' } };
  } catch (error) {
    return { status: 503, problem: `grid unavailable: ${(error as Error).message}`, headers: { 'retry-after': '5' } };
  }
}

/** ws://HOST:PORT as the client reached this proxy: where a session's client attaches. */
function connectBase(req: IncomingMessage, config: { host: string; port: number }): string {
  return `ws://${req.headers.host ?? `${config.host}:${config.port}`}`;
}
