// playwright-distributed's session control plane on every proxy:
// POST /v1/sessions takes a slot for a session before its client connects
// (201 with the Session; 429 when the queue is full), the client attaches
// over ws://HOST:PORT/sessions/{id} (attach.ts), and GET / DELETE
// /v1/sessions/{id} read and end it. A pending session holds its slot for
// sessionKeepAlive, then expires and gives it back. DELETE of a running
// session closes its relay at once when it runs at this proxy, else at the
// next heartbeat of the proxy relaying it.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { publishCapacity } from '../admission/admission.ts';
import { redisDeadline } from '../redis-deadline.ts';
import type { BrowserType } from '../refs.ts';
import { endSession, releaseConnection } from '../scripts.ts';
import { withoutSecret } from '../worker/endpoint-secret.ts';
import { noWorkerAnswer } from './no-worker.ts';
import type { ProxyParts } from './parts.ts';
import { createRecord, effectiveStatus, proxyAlive, readRecord, sessionView } from './session-records.ts';
import { readSessionRequest } from './session-request.ts';

/** What a route answers: a JSON body (status 2xx), or a problem's detail. */
export interface Reply {
  status: number;
  body?: unknown;
  problem?: string;
  headers?: Record<string, string>;
}

const ENDED = new Set(['completed', 'failed', 'expired']);

export class ApiSessions {
  /** Sessions created here and not attached yet: id → the slot they hold and their expiry timer. */
  private readonly pending = new Map<string, { ref: string; timer: ReturnType<typeof setTimeout> }>();
  /** Sessions relayed here: id → the client's socket, closed when the session is deleted. */
  private readonly attached = new Map<string, Socket>();

  constructor(private readonly parts: ProxyParts) {}

  /** POST /v1/sessions. `base`: ws://HOST:PORT as the client reached this proxy. */
  async create(req: IncomingMessage, base: string): Promise<Reply | undefined> {
    const { ctx, admission, leases, metrics } = this.parts;
    const asked = await readSessionRequest(req, ctx.config.defaultBrowserType);
    if ('problem' in asked) return { status: 400, problem: asked.problem };
    const id = randomUUID();
    const gone = new AbortController();
    const hungUp = () => gone.abort();
    req.socket.once('close', hungUp);
    const browser = asked.browser as BrowserType;
    try {
      const admitted = await admission.acquire(browser, asked.playwrightVersion, id, [], gone.signal);
      const count = (result: string) => metrics.connections.inc({ browser, result });
      switch (admitted.kind) {
        case 'gone':
          count('client_left');
          return undefined;
        case 'absent':
          count('no_worker');
          return { status: 503, problem: (await noWorkerAnswer(ctx, 'playwright', browser)).message, headers: { 'retry-after': '5' } };
        case 'noversion':
          count('no_version');
          return { status: 422, problem: `playwright_version ${asked.playwrightVersion} is not served by this grid: its ${browser} workers speak Playwright ${admitted.versions.join(', ') || '(none known yet)'}` };
        case 'full':
          count('queue_full');
          return { status: 429, problem: `all ${browser} workers are busy and ${ctx.config.queueSize} clients are already waiting`, headers: { 'retry-after': '5' } };
        case 'timeout':
          count('timeout');
          return { status: 503, problem: `No available servers: no ${browser} slot freed within the queue timeout (${ctx.config.queueTimeout}s)`, headers: { 'retry-after': String(Math.max(1, Math.ceil(ctx.config.queueTimeout / 6))) } };
      }
      const selected = { ref: admitted.ref, address: withoutSecret(admitted.endpoint), lifetime: admitted.lifetime };
      try {
        await redisDeadline(createRecord(ctx, this.parts.proxyId, id, asked, selected));
      } catch (error) {
        await leases.release(admitted.ref, id, true);
        throw error;
      }
      count('session_created');
      const timer = setTimeout(() => void this.expire(id), ctx.config.sessionKeepAlive * 1000);
      timer.unref();
      this.pending.set(id, { ref: admitted.ref, timer });
      const view = await this.view(id, base);
      return { status: 201, body: view?.body, headers: { location: `/v1/sessions/${id}` } };
    } finally {
      req.socket.off('close', hungUp);
    }
  }

  /** GET /v1/sessions/{id}. */
  async read(id: string, base: string): Promise<Reply> {
    return (await this.view(id, base)) ?? notFound(id);
  }

  /** DELETE /v1/sessions/{id}: a pending session gives its slot back now, a running one's relay closes. */
  async remove(id: string): Promise<Reply> {
    const { ctx } = this.parts;
    const record = await redisDeadline(readRecord(ctx, id));
    if (!record) return notFound(id);
    const from = await redisDeadline(endSession(ctx, id, ['pending', 'running'], 'completed', 'deleted (DELETE /v1/sessions/{id})'));
    if (from === 'pending') {
      // not attached: its lease is still at the proxy that created it
      const { free } = await redisDeadline(releaseConnection(ctx, record.proxy_id!, record.worker_ref!, id, true));
      if (free) await publishCapacity(ctx, record.browser!);
      this.forgetPending(id);
    }
    if (from === 'running') this.attached.get(id)?.destroy();
    return { status: 204 };
  }

  /** A client attaches here (attach.ts): the session no longer expires here, and a DELETE closes it. */
  attachedHere(id: string, socket: Socket): void {
    this.forgetPending(id);
    this.attached.set(id, socket);
  }

  detached(id: string): void {
    this.attached.delete(id);
  }

  /** Each heartbeat: closes the relays of sessions ended elsewhere (a DELETE at another proxy) and keeps the others' records. */
  async heartbeat(): Promise<void> {
    const { backend, keys, config } = this.parts.ctx;
    const ids = [...this.attached.keys()];
    if (!ids.length) return;
    const statuses = await backend.pipeline(ids.map((sessionId) => ['HGET', keys.session({ sessionId }), 'status']));
    const running: string[] = [];
    ids.forEach((id, i) => (ENDED.has(statuses[i] as string) ? this.attached.get(id)?.destroy() : running.push(id)));
    await backend.pipeline(running.map((sessionId) => ['EXPIRE', keys.session({ sessionId }), Math.ceil(config.sessionRetention)]));
  }

  /** The session as GET shows it, or undefined when there is none. */
  private async view(id: string, base: string): Promise<Reply | undefined> {
    const { ctx, proxyId } = this.parts;
    const record = await redisDeadline(readRecord(ctx, id));
    if (!record) return undefined;
    const alive = record.proxy_id === proxyId || (await redisDeadline(proxyAlive(ctx, record.proxy_id!)));
    return { status: 200, body: sessionView(record, effectiveStatus(record, ctx.clock.now(), alive), `${base}/sessions/${id}`) };
  }

  /** No client attached within sessionKeepAlive: expired, its slot given back (retried a heartbeat later while Redis is away). */
  private async expire(id: string): Promise<void> {
    const { ctx, leases } = this.parts;
    const ref = this.pending.get(id)?.ref;
    if (!ref) return;
    try {
      await redisDeadline(endSession(ctx, id, ['pending'], 'expired', `no client attached within keep_alive_ms (${ctx.config.sessionKeepAlive * 1000} ms)`));
      this.pending.delete(id);
      // a lease that moved (attached at another proxy) or was given back (deleted) is not here: a no-op then
      await leases.release(ref, id, true);
    } catch {
      const timer = setTimeout(() => void this.expire(id), ctx.config.heartbeatInterval * 1000);
      timer.unref();
      this.pending.set(id, { ref, timer });
    }
  }

  private forgetPending(id: string): void {
    clearTimeout(this.pending.get(id)?.timer);
    this.pending.delete(id);
  }
}

function notFound(id: string): Reply {
  return { status: 404, problem: `no session ${id}: never created, or it ended more than sessionRetention ago` };
}
