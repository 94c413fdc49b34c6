// The client of a session created with POST /v1/sessions attaches over
// ws://HOST:PORT/sessions/{id}, at any proxy: the session's slot moves to
// this proxy (attachSession.lua), its worker is dialled and the two relayed
// as any Playwright client is (session.ts). A session takes one client, once;
// a failed dial ends it failed, its slot given back.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { DialError } from '../errors.ts';
import { redisDeadline } from '../redis-deadline.ts';
import { parseRef } from '../refs.ts';
import { dialUpgrade, type Dialed } from '../relay/dial.ts';
import { attachSession, endSession } from '../scripts.ts';
import type { ProxyParts } from './parts.ts';
import { isSessionId, readRecord } from './session-records.ts';
import { relaySession } from './session.ts';

const DIAL_TIMEOUT_MS = 10_000;

/** The path a session's client attaches on; its id when `pathname` is one. */
export function attachPathId(pathname: string): string | undefined {
  const id = /^\/sessions\/([^/]+)$/.exec(pathname)?.[1];
  return id && isSessionId(id) ? id : undefined;
}

export interface AttachingClient {
  req: IncomingMessage;
  socket: Socket;
  /** What the client sent so far (request's head remainder and anything while it waited); stops holding it. */
  takeHead(): Buffer;
  /** Answers the client with an HTTP error and ends it. */
  answer(code: number, message: string): void;
}

/** Attaches the client to session `id` and relays it until the session ends. */
export async function attach(parts: ProxyParts, client: AttachingClient, id: string): Promise<void> {
  const { ctx, proxyId, leases } = parts;
  let record;
  let outcome;
  try {
    record = await redisDeadline(readRecord(ctx, id));
    if (!record) return client.answer(404, `no session ${id}: create one with POST /v1/sessions, then attach within its keep_alive_ms`);
    outcome = await redisDeadline(attachSession(ctx, id, record.proxy_id!, proxyId));
  } catch {
    return client.answer(503, 'grid unavailable: cannot reach Redis');
  }
  if ('refused' in outcome) return client.answer(...refusal(id, outcome.refused));
  const { ref } = outcome;
  parts.apiSessions.attachedHere(id, client.socket);
  const fail = async (why: string, answer: () => void) => {
    parts.apiSessions.detached(id);
    answer();
    await redisDeadline(endSession(ctx, id, ['running'], 'failed', why)).catch(() => {});
    await leases.release(ref, id, true);
  };
  let dialed: Dialed;
  try {
    const endpoint = await workerEndpoint(parts, ref);
    if (!endpoint) return await fail('its worker left the grid before the client attached', () => client.answer(502, `session ${id} failed: its worker left the grid; create another`));
    dialed = await dialUpgrade(endpoint, client.req, DIAL_TIMEOUT_MS);
  } catch (error) {
    const why = error instanceof DialError ? `its worker could not be reached: ${error.message}` : `Redis did not answer: ${(error as Error).message}`;
    return await fail(why, () => client.answer(502, `session ${id} failed: ${why}`));
  }
  if (dialed.status !== 101) {
    // the worker's own refusal (a Playwright version not the client's) goes to the client as it is
    return await fail(`its worker refused the client (${dialed.status})`, () => (dialed.socket.destroy(), client.socket.end(dialed.response)));
  }
  const { browserType } = parseRef(ref);
  try {
    await relaySession(parts, { socket: client.socket, head: client.takeHead(), connectionId: id }, { kind: 'ok', ref, endpoint: '', lifetime: Number(record.lifetime), queuedMs: 0 }, dialed, { browserType, protocol: 'playwright' });
  } finally {
    parts.apiSessions.detached(id);
    await redisDeadline(endSession(ctx, id, ['running'], 'completed', 'the connection closed')).catch(() => {});
  }
}

/** The endpoint (with its secret path) of the worker `ref`, as Redis has it; undefined once it left. */
async function workerEndpoint(parts: ProxyParts, ref: string): Promise<string | undefined> {
  const { ctx } = parts;
  const [ws, endpoint] = (await redisDeadline(ctx.backend.send(['HMGET', ctx.keys.worker(parseRef(ref)), 'wsEndpoint', 'endpoint']))) as (string | null)[];
  return ws ?? endpoint ?? undefined;
}

/** Why a session cannot be attached, as a status and a line. */
function refusal(id: string, why: string): [number, string] {
  switch (why) {
    case 'absent':
      return [404, `no session ${id}: create one with POST /v1/sessions, then attach within its keep_alive_ms`];
    case 'running':
    case 'moved':
      return [409, `session ${id} has a client already: a session takes one client`];
    case 'expired':
      return [410, `session ${id} expired: no client attached within its keep_alive_ms; create another`];
    case 'lost':
      return [410, `session ${id} failed: its slot was given back before the client attached (the proxy that created it stopped); create another`];
    default:
      return [410, `session ${id} is ${why}: a session takes one client, once; create another`];
  }
}
