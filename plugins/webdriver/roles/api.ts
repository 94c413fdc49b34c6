// The API: the grid as JSON, read from Redis on each request. It binds
// loopback unless api.host says otherwise; with proxy.token set or API keys
// made, every path needs the token or a key (header or ?token=), as the proxy does.
//   GET /api/sessions[?state=active|terminated]   sessions with status timestamps, timings, capabilities
//   GET /api/sessions/{id}                        one session with its log
//   (a recorded session has `recording`: the proxy path of its video, with its own token when the grid has one)
//   GET /api/orchestrators                        orchestrators with their slots and queues
//   GET /api/metrics                              every metrics key
//   GET /api/status                               the grid's capacity
//   POST /graphql                                 Selenium Grid's GraphQL (as on the proxy)
//   GET /ui (GET / redirects)                     the grid page (as on the proxy)
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Role } from '../../../entries/plugin.ts';
import { GridAccess } from '../access.ts';
import { credentials, UNAUTHORIZED_MESSAGE } from '../auth.ts';
import type { Ctx } from '../context.ts';
import { answerGraphql, gridUrl } from '../views/graphql.ts';
import { closeServer, listen, readBody, sendError, sendJson } from '../http/serve.ts';
import { advertisedHost } from '../http/advertised-host.ts';
import { readMetrics, readOrchestrators } from '../views/orchestrators.ts';
import { readSessions, sessionIds } from '../views/sessions.ts';
import { gridCapacity } from '../views/status.ts';
import { isPagePath, servePage } from '../views/ui-page.ts';
import { withRecordings } from '../storage/proxy.ts';

const API_HOST_TTL = 60;

export function apiRole(ctx: Ctx): Role {
  const { config, logger, keys, backend } = ctx;
  const apiId = randomUUID().replaceAll('-', '');
  let port = 0;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const access = new GridAccess(backend, keys, config.proxy.token);
  const server = createServer((req, res) =>
    void onRequest(req, res).catch((error) => sendJson(res, 503, { error: `grid unavailable: ${(error as Error).message}` })),
  );

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // on a closed grid, nothing at all is said without the token or a key: no session id, not even which paths exist
    if (credentials(access, req.headers.authorization, req.url) !== 'token') return sendError(res, 'unauthorized', UNAUTHORIZED_MESSAGE);
    const url = new URL(req.url ?? '/', 'http://api');
    if (isPagePath(req.method, url.pathname)) return servePage(access, req, res);
    if (url.pathname === '/graphql') {
      const body = await readBody(req, config.proxy.bodyLimit, config.proxy.bodyTimeout * 1000).catch((error: Error) => error);
      if (body instanceof Error) return sendError(res, body as never);
      const answer = await answerGraphql(ctx, req.method ?? 'GET', body, gridUrl(config, req.headers, `${config.api.host}:${port}`), access.secret);
      return sendJson(res, answer.status, answer.body);
    }
    if (req.method !== 'GET') return sendError(res, 'unknown method', 'the API is read-only: use GET');
    const path = url.pathname.replace(/\/$/, '');
    if (path === '/api/sessions') {
      const state = url.searchParams.get('state');
      const which = state === 'active' || state === 'terminated' ? state : 'all';
      return sendJson(res, 200, { sessions: await withRecordings(ctx, access.secret, await readSessions(ctx, await sessionIds(ctx, which))) });
    }
    const one = /^\/api\/sessions\/([^/]+)$/.exec(path);
    if (one) {
      const [view] = await withRecordings(ctx, access.secret, await readSessions(ctx, [decodeURIComponent(one[1]!)], true));
      return view ? sendJson(res, 200, view) : sendJson(res, 404, { error: `no session ${one[1]}` });
    }
    if (path === '/api/orchestrators') return sendJson(res, 200, { orchestrators: await readOrchestrators(ctx) });
    if (path === '/api/metrics') return sendJson(res, 200, await readMetrics(ctx));
    if (path === '/api/status') return sendJson(res, 200, await gridCapacity(ctx));
    sendJson(res, 404, { error: `no such path ${path}; try /api/sessions, /api/orchestrators, /api/metrics, /api/status, /graphql, /ui` });
  }

  /** The host key, and the API keys read again (a revoked key is refused within a heartbeat). */
  const announce = () => Promise.all([backend.send(['SET', keys.apiHost({ apiId }), `${advertisedHost(config.api.host)}:${port}`, 'EX', API_HOST_TTL]), access.refresh()]);

  return {
    async start() {
      port = await listen(server, config.api.host, config.api.port, 'webdriver api');
      await announce();
      heartbeat = setInterval(() => void announce().catch((error) => logger.warn('api heartbeat failed', { error: (error as Error).message })), Math.min(config.heartbeat.interval, API_HOST_TTL / 3) * 1000);
      logger.info(`api listening on http://${config.api.host}:${port}/api/sessions`, { port });
    },
    async stop() {
      clearInterval(heartbeat);
      await backend.send(['DEL', keys.apiHost({ apiId })]).catch(() => {});
      await closeServer(server);
    },
  };
}
