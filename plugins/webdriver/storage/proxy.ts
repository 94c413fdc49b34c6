// The proxy's side of recordings: GET/HEAD /storage/{sid}/{file} goes to a
// live provider of that storage (found in storage:{sid}:providers, then its
// storage:{sid}:{pid}:host), streamed both ways with the Range headers, so a
// browser seeks without the proxy holding the file. On a closed grid it takes
// the grid token or an API key, or a recording's own token (HMAC of the grid
// secret and the session id, as the API's link carries it), which opens that
// file and nothing else. The storage role is sent the grid secret.
import { createHmac } from 'node:crypto';
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { credentials, type Gate, sameSecret, sentToken } from '../auth.ts';
import type { Ctx } from '../context.ts';
import { RECORDING_FILE, STORAGE_HOST_TTL } from './files.ts';
import { WebDriverError } from '../errors.ts';

export const STORAGE_PATH = /^\/storage\/([A-Za-z0-9_.-]+)\/([^/?]+)$/;

/** The token in a recording's link: it opens that session's recording only. */
export function recordingToken(secret: string, sessionId: string): string {
  return createHmac('sha256', secret).update(`webdriver recording ${sessionId}`).digest('base64url');
}

/** The proxy path of a session's recording, with its own token when the grid is closed (`secret`: the grid's, access.ts). */
export function recordingLink(secret: string | undefined, storage: string, sessionId: string): string {
  const path = `/storage/${storage}/${sessionId}.mp4`;
  return secret ? `${path}?token=${recordingToken(secret, sessionId)}` : path;
}

/** Headers passed on each way: what seeking and caching need, nothing else. */
const REQUEST_HEADERS = ['range', 'if-range', 'if-none-match', 'if-modified-since'];
const RESPONSE_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'last-modified', 'etag', 'cache-control'];

/** Answers a /storage/… request (path already matched); resolves with the status sent. */
export async function forwardStorage(ctx: Ctx, gate: Gate, req: IncomingMessage, res: ServerResponse, path: string): Promise<number> {
  const { keys, backend } = ctx;
  const [, sid, file] = STORAGE_PATH.exec(path) as unknown as [string, string, string];
  const session = RECORDING_FILE.exec(file)?.[1];
  const secret = gate.secret;
  const own = session && secret && sameSecret(sentToken(undefined, req.url), recordingToken(secret, session));
  if (!own && credentials(gate, req.headers.authorization, req.url) !== 'token') return answer(res, 401, 'missing or wrong token: send Authorization: Bearer TOKEN or use the link the API gives');
  if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'recordings are read with GET or HEAD');
  if (!session) return answer(res, 404, `no recording ${file}: recordings are /storage/{storageId}/{sessionId}.mp4`);
  const providers = (await backend.send(['ZRANGEBYSCORE', keys.storageProviders({ storageId: sid }), Date.now() - STORAGE_HOST_TTL * 1000, '+inf'])) as string[];
  const hosts = providers.length ? ((await backend.pipeline(providers.map((providerId) => ['GET', keys.storageHost({ storageId: sid, providerId })]))) as (string | null)[]) : [];
  // a provider killed -9 stays listed until its key expires: try the others before giving up
  const live = hosts.filter((h): h is string => typeof h === 'string').sort(() => Math.random() - 0.5);
  const headers: Record<string, string> = secret ? { authorization: `Bearer ${secret}` } : {};
  for (const name of REQUEST_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const failures: string[] = [];
  for (const host of live) {
    const status = await relay(req, res, host, `/storage/${sid}/${file}`, headers).catch((error: Error) => {
      failures.push(`${host}: ${error.message}`);
      return undefined;
    });
    if (status !== undefined) return status;
  }
  return answer(res, 503, live.length ? `no storage provider of ${sid} answered (${failures.join('; ')})` : `no storage provider of ${sid} is running: start coord run --plugin webdriver --role storage with webdriver.storage.id=${sid}`);
}

/** One request to a provider, its answer streamed to the client; rejects when the provider cannot be reached (nothing sent yet). */
function relay(req: IncomingMessage, res: ServerResponse, hostPort: string, path: string, headers: Record<string, string>): Promise<number> {
  const at = hostPort.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const upstream = request({ host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)), method: req.method, path, headers, timeout: 10_000 }, (answer) => {
      upstream.setTimeout(0); // answering: a slow reader may pause the stream as long as it likes
      const passed: Record<string, string | string[]> = {};
      for (const name of RESPONSE_HEADERS) {
        const value = answer.headers[name];
        if (value !== undefined) passed[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, passed);
      answer.pipe(res);
      answer.once('end', () => resolve(answer.statusCode ?? 502));
      answer.once('error', () => (res.destroy(), resolve(502)));
    });
    upstream.once('timeout', () => upstream.destroy(new WebDriverError('no answer within 10 s', { code: 'COORD_ERR_WEBDRIVER_STORAGE_TIMEOUT' })));
    upstream.once('error', (error) => (res.headersSent ? (res.destroy(), resolve(502)) : reject(error)));
    res.once('close', () => upstream.destroy());
    upstream.end();
  });
}

function answer(res: ServerResponse, status: number, message: string): number {
  if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: message }));
  return status;
}

/** Adds to each session the proxy path of its recording, when it has one (session:{id}:storage). */
export async function withRecordings<T extends { id: string }>(ctx: Pick<Ctx, 'backend' | 'keys'>, secret: string | undefined, sessions: T[]): Promise<(T & { recording?: string })[]> {
  if (!sessions.length) return sessions;
  const storages = await ctx.backend.pipeline(sessions.map((s) => ['GET', ctx.keys.sessionStorage({ sessionId: s.id })]));
  return sessions.map((s, i) => {
    const storage = storages[i];
    return typeof storage === 'string' ? { ...s, recording: recordingLink(secret, storage, s.id) } : s;
  });
}
