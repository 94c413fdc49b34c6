// The orchestrator's HTTP API and its page. JSON in and out:
//   GET  /api/status              state, workers, users, results so far
//   POST /api/start               {scenario?, users, spawnRate, duration?, params?, rate?, stages?, rateStages?}
//   POST /api/users               {users}
//   POST /api/stop
//   POST /api/reset               zeroes the running test's statistics (of every worker)
//   GET  /api/probes              the probes' values in the running or last test (probes.ts)
//   GET  /                        the page (page.ts)
// With a token configured every request must carry it (Authorization: Bearer
// or ?token=); the page passes on the one it was opened with. Host, Origin,
// content type and scenario paths are checked by guard.ts (403 / 400).
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { allowedScenario, guardRequest } from './guard.ts';
import { page } from '../report/page.ts';
import { parseCount, parseDuration, parseRate } from '../parse.ts';
import { reportRoutes } from './report-routes.ts';
import { resourceRoutes } from './resource-routes.ts';
import { readProbes } from '../scenario/probes.ts';
import { parseStages } from '../scenario/shape.ts';
import type { StartOptions, TestController } from '../run-lifecycle/controller.ts';
import type { Ctx } from '../context.ts';
import { ConflictError, ForbiddenError, InputError } from '../errors.ts';

export async function serveApi(ctx: Ctx, controller: TestController): Promise<Server> {
  const server = createServer((req, res) => {
    void handle(ctx, controller, req, res).catch((err: unknown) => reply(res, 500, { error: (err as Error).message }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(err.code === 'EADDRINUSE' ? `load-test API: port ${ctx.config.port} on ${ctx.config.host} is in use (set load-test.port)` : err.message)),
    );
    server.listen(ctx.config.port, ctx.config.host, resolve);
  });
  return server;
}

async function handle(ctx: Ctx, controller: TestController, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  try {
    guardRequest(ctx.config, req);
  } catch (err) {
    if (err instanceof ForbiddenError) return reply(res, 403, { error: err.message });
    throw err;
  }
  if (!authorized(ctx.config.token, req, url)) return reply(res, 401, { error: 'missing or wrong token: send Authorization: Bearer TOKEN or ?token=TOKEN' });
  const route = `${req.method} ${url.pathname}`;
  try {
    switch (route) {
      case 'GET /':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
        return;
      case 'GET /api/status':
        return reply(res, 200, await controller.status());
      case 'GET /api/probes': {
        const epoch = Number((await ctx.backend.send(['GET', ctx.keys.testEpoch()])) ?? 0);
        return reply(res, 200, { epoch, probes: await readProbes(ctx, epoch) });
      }
      case 'POST /api/start': {
        const body = await readJson(req);
        const options = startOptions(body);
        const started = await controller.start({ ...options, scenario: allowedScenario(ctx.config, options.scenario) });
        return reply(res, 202, { epoch: started.epoch });
      }
      case 'POST /api/users': {
        const body = await readJson(req);
        await controller.setUsers(parseCount(body.users, 'users'));
        return reply(res, 202, { users: body.users });
      }
      case 'POST /api/stop': {
        const result = await controller.stop('stopped through the API');
        return reply(res, 200, controller.ranNothing ? { ...result, noRequests: true } : result);
      }
      case 'POST /api/reset':
        controller.resetStats();
        return reply(res, 200, { reset: true });
      default:
        if (await reportRoutes(route, url, res, controller, (epoch) => readProbes(ctx, epoch))) return;
        if (await resourceRoutes(ctx, route, req, res, controller)) return;
        return reply(res, 404, { error: `no route ${route}: have GET /, GET /api/status, GET /api/probes, POST /api/start, POST /api/users, POST /api/stop, POST /api/reset` });
    }
  } catch (err) {
    if (err instanceof InputError) return reply(res, 400, { error: err.message });
    if (err instanceof ConflictError) return reply(res, 409, { error: err.message });
    throw err;
  }
}

/** A start request's body → StartOptions; each bad field is a 400 naming it. */
export function startOptions(body: Record<string, unknown>): StartOptions {
  const users = parseCount(body.users ?? 1, 'users', 1);
  return {
    scenario: typeof body.scenario === 'string' && body.scenario ? body.scenario : undefined,
    users,
    spawnRate: body.spawnRate === undefined ? users : parseRate(body.spawnRate, 'spawnRate'),
    durationMs: body.duration === undefined || body.duration === '' ? undefined : parseDuration(body.duration, 'duration'),
    params: typeof body.params === 'object' && body.params !== null ? (body.params as Record<string, unknown>) : undefined,
    rate: body.rate === undefined || body.rate === '' ? undefined : parseRate(body.rate, 'rate'),
    stages: body.stages === undefined || body.stages === '' ? undefined : parseStages(body.stages, 'stages', 'users'),
    rateStages: body.rateStages === undefined || body.rateStages === '' ? undefined : parseStages(body.rateStages, 'rateStages', 'rate'),
  };
}

function authorized(token: string | undefined, req: IncomingMessage, url: URL): boolean {
  if (!token) return true;
  const given = req.headers.authorization?.replace(/^Bearer\s+/i, '') ?? url.searchParams.get('token') ?? '';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 1_000_000) throw new InputError('request body is larger than 1 MB');
  }
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError('request body is not a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('request body is not a JSON object');
  return value as Record<string, unknown>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
