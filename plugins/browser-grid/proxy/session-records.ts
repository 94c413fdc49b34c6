// The record of a session created with POST /v1/sessions (the `session` key),
// and how playwright-distributed's API shows a session: its Session object,
// with pd's field names. Every proxy reads the same record, so any of them
// answers GET /v1/sessions/{id}. A status the record cannot know is worked out
// on reading: a pending session past its expiry is expired even before the
// proxy that created it has filed it so, and a running one whose proxy stopped
// heartbeating (killed) failed.
import type { Ctx } from '../context.ts';
import { parseRef } from '../refs.ts';

export type SessionStatus = 'pending' | 'running' | 'completed' | 'failed' | 'expired';

/** The record's fields, as Redis holds them (strings). */
export type SessionRecord = Record<string, string>;

/** What POST /v1/sessions asked for, checked. */
export interface SessionRequest {
  browser: string;
  /** major.minor, or '' for any. */
  playwrightVersion: string;
  connectMetadata: Record<string, unknown>;
}

/** Writes a new pending session's record, holding `ref`'s slot; it lives until its expiry plus the retention. */
export async function createRecord(ctx: Ctx, proxyId: string, id: string, asked: SessionRequest, selected: { ref: string; address: string; lifetime: number }): Promise<void> {
  const now = ctx.clock.now();
  const keepAliveMs = Math.round(ctx.config.sessionKeepAlive * 1000);
  const key = ctx.keys.session({ sessionId: id });
  await ctx.backend.send([
    'HSET', key,
    'id', id,
    'browser', asked.browser,
    'playwright_version', asked.playwrightVersion,
    'mode', 'default',
    'connect_metadata', JSON.stringify(asked.connectMetadata),
    'status', 'pending',
    'worker_ref', selected.ref,
    'worker_address', selected.address,
    'proxy_id', proxyId,
    'lifetime', selected.lifetime,
    'created_ms', now,
    'expires_ms', now + keepAliveMs,
    'keep_alive_ms', keepAliveMs,
  ]);
  await ctx.backend.send(['EXPIRE', key, Math.ceil(ctx.config.sessionKeepAlive + ctx.config.sessionRetention)]);
}

/** A session's record, or undefined when there is none (never created, or past its retention). */
export async function readRecord(ctx: Ctx, id: string): Promise<SessionRecord | undefined> {
  return toRecord(await ctx.backend.send(['HGETALL', ctx.keys.session({ sessionId: id })]));
}

/** An HGETALL reply's fields, or undefined when there were none. */
export function toRecord(reply: unknown): SessionRecord | undefined {
  if (!Array.isArray(reply) || !reply.length) return undefined;
  const record: SessionRecord = {};
  for (let i = 0; i < reply.length; i += 2) record[reply[i] as string] = reply[i + 1] as string;
  return record;
}

/** Is `id` a session id (a UUID, as playwright-distributed's)? */
export function isSessionId(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);
}

/** The status to show: the record's, or what it must be by now (see the header). `proxyAlive`: is the proxy holding its lease heartbeating? */
export function effectiveStatus(record: SessionRecord, nowMs: number, proxyAlive: boolean): SessionStatus {
  const status = record.status as SessionStatus;
  if (status === 'pending' && nowMs > Number(record.expires_ms)) return 'expired';
  if ((status === 'pending' || status === 'running') && !proxyAlive) return 'failed';
  return status;
}

/** Is `proxyId` heartbeating (within the proxy timeout)? */
export async function proxyAlive(ctx: Ctx, proxyId: string): Promise<boolean> {
  const beat = Number(await ctx.backend.send(['ZSCORE', ctx.keys.proxyIndex(), proxyId]));
  return beat > 0 && ctx.clock.now() - beat <= ctx.config.proxyTimeout * 1000;
}

const iso = (ms: string | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);

/** playwright-distributed's Session object for a record; `connectUrl`: where its client attaches. */
export function sessionView(record: SessionRecord, status: SessionStatus, connectUrl: string) {
  return {
    id: record.id,
    browser: record.browser,
    playwright_version: record.playwright_version ?? '',
    mode: record.mode ?? 'default',
    status,
    worker_id: parseRef(record.worker_ref ?? ':').workerId,
    worker_address: record.worker_address ?? '',
    connect_metadata: JSON.parse(record.connect_metadata ?? '{}') as unknown,
    created_at: iso(record.created_ms),
    started_at: iso(record.started_ms),
    expires_at: iso(record.expires_ms),
    keep_alive_ms: Number(record.keep_alive_ms ?? 0),
    // coord's additions
    ended_at: iso(record.ended_ms),
    end_reason: record.end_reason ?? null,
    connect_url: connectUrl,
    proxy_id: record.proxy_id,
  };
}
