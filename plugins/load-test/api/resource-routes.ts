// The resources of the running test, seen and added to from the page (as
// vikhry's UI does):
//   GET  /api/resources   [{name, count, loaded, free, held, first, last}]
//   POST /api/resources   {name, count, data?} → adds `count` resources to the
//        pool `name`, each with the JSON payload `data` (default null)
// Resources live as long as a test (built by the scenario's factories when it
// starts, cleared when it ends), so adding is for a RUNNING test: 409
// otherwise. The new ids come after the declared ones; their payloads are
// written before the count moves, so the pool sync (syncPool.lua) never
// hands out an id without its payload; the orchestrator then runs that sync
// itself, as the workers sync a pool only once per test. One orchestrator adds at a time
// (it holds the test's lease), and its adds are queued here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Command } from '../../../entries/plugin.ts';
import { parseCount } from '../parse.ts';
import type { TestController } from '../run-lifecycle/controller.ts';
import type { Ctx } from '../context.ts';
import { ConflictError, InputError } from '../errors.ts';
import { syncPool } from '../scripts.ts';

export interface ResourceView {
  name: string;
  /** Ids declared (1…count). */
  count: number;
  /** Ids the workers' pool sync has put into the available set so far. */
  loaded: number;
  free: number;
  /** Loaded ids a user holds now. */
  held: number;
  /** Payloads of id 1 and of the last id. */
  first: unknown;
  last: unknown;
}

let adding: Promise<unknown> = Promise.resolve();

export async function resourceRoutes(ctx: Ctx, route: string, req: IncomingMessage, res: ServerResponse, controller: TestController): Promise<boolean> {
  if (route === 'GET /api/resources') {
    reply(res, 200, { resources: await readResources(ctx) });
    return true;
  }
  if (route !== 'POST /api/resources') return false;
  const body = await readJson(req);
  const name = typeof body.name === 'string' ? body.name : '';
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new InputError(`resource name ${JSON.stringify(body.name ?? '')} is not valid: expected letters, digits, _ and -`);
  const count = parseCount(body.count, 'count', 1);
  if (count > 100_000) throw new InputError(`count ${count} is too many at once: add at most 100000`);
  if ((await controller.status()).state !== 'RUNNING') {
    throw new ConflictError('resources are built when a test starts and cleared when it ends: add them while a test runs');
  }
  const data = JSON.stringify(body.data ?? null);
  const added = (adding = adding.catch(() => {}).then(() => addResources(ctx, name, count, data)));
  reply(res, 201, await added);
  return true;
}

async function addResources(ctx: Ctx, name: string, count: number, data: string): Promise<{ name: string; from: number; to: number }> {
  const { backend, keys } = ctx;
  const declared = Number((await backend.send(['HGET', keys.resources(), name])) ?? 0);
  for (let start = declared + 1; start <= declared + count; start += 1000) {
    const commands: Command[] = [];
    for (let id = start; id <= Math.min(start + 999, declared + count); id++) commands.push(['SET', keys.resource({ name, resourceId: id }), data]);
    const failed = (await backend.pipeline(commands)).find((r) => r instanceof Error);
    if (failed) throw failed;
  }
  await backend.send(['HSET', keys.resources(), name, declared + count]);
  // The workers sync a pool once per test: the orchestrator moves the new ids into it (the same atomic script).
  await syncPool(ctx, name);
  return { name, from: declared + 1, to: declared + count };
}

export async function readResources(ctx: Ctx): Promise<ResourceView[]> {
  const { backend, keys } = ctx;
  const hash = (await backend.send(['HGETALL', keys.resources()])) as string[];
  const views: ResourceView[] = [];
  for (let i = 0; i + 1 < hash.length; i += 2) {
    const name = hash[i]!;
    const count = Number(hash[i + 1]);
    const [loaded, free, first, last] = (await backend.pipeline([
      ['GET', keys.resourceLoaded({ name })],
      ['SCARD', keys.resourceAvailable({ name })],
      ['GET', keys.resource({ name, resourceId: 1 })],
      ['GET', keys.resource({ name, resourceId: count })],
    ])) as (string | number | null)[];
    const payload = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : null);
    views.push({ name, count, loaded: Number(loaded ?? 0), free: Number(free), held: Number(loaded ?? 0) - Number(free), first: payload(first), last: payload(last) });
  }
  return views.sort((a, b) => a.name.localeCompare(b.name));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 1_000_000) throw new InputError('request body is larger than 1 MB');
  }
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new InputError('request body is not a JSON object');
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
