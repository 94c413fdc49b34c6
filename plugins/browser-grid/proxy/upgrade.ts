// One client's way through the proxy, from its WebSocket upgrade request to a
// relayed session: the request is checked (path, token, handshake, browser),
// the client is admitted (a worker selected, or queued; a Playwright version
// started on demand), the worker dialed (another one tried when it fails or
// refuses), and the two relayed until either side closes.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Admitted, Protocol } from '../admission/admission.ts';
import { awaitVersion } from '../admission/versions-on-demand.ts';
import { dialLeased, onThisHost } from '../cdp/lease.ts';
import { onDemandAllows } from '../config.ts';
import { DialError } from '../errors.ts';
import { fileVersion } from '../foreign/adopt.ts';
import { browserTypes, clientVersion, type BrowserType } from '../refs.ts';
import { dialUpgrade, type Dialed } from '../relay/dial.ts';
import { rejectUpgrade, tokenAccepted } from './answers.ts';
import { attach, attachPathId } from './attach.ts';
import { handshakeProblem } from './client-limits.ts';
import { noWorkerAnswer } from './no-worker.ts';
import type { ProxyParts } from './parts.ts';
import { relaySession } from './session.ts';

const DIAL_TIMEOUT_MS = 10_000;
/**
 * A BiDi worker answers only once the client's Firefox has started and taken its session
 * (bidi/front.ts): 5–9 s on an idle machine, more on a loaded one.
 */
const BIDI_DIAL_TIMEOUT_MS = 60_000;
/** The protocol each path serves ('/': Playwright's). */
const PATHS: Record<string, Protocol> = { '/': 'playwright', '/cdp': 'cdp', '/bidi': 'bidi' };

/** What the client asked for. */
interface Wanted {
  /** The session created with POST /v1/sessions it attaches to (ws://HOST:PORT/sessions/{id}). */
  sessionId?: string;
  protocol: Protocol;
  browserType: BrowserType;
  /** The client's Playwright major.minor, or ''. */
  version: string;
}

type Chosen = Extract<Admitted, { kind: 'ok' }>;

/** Why a client's wait was given up: one shared reason, as abort() with none makes a DOMException with a stack for each churned client. */
const HUNG_UP = new Error('the client hung up');

/** Why the loop goes round again: a dial attempt was spent, or not (the worker was gone, a version was started). */
type Again = 'attempt used' | 'no attempt used';

/** Serves one upgrade request through to its end. */
export function onUpgrade(parts: ProxyParts, req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
  return new ClientUpgrade(parts, req, socket, head).run();
}

class ClientUpgrade {
  /** A UUID, as playwright-distributed's session ids (the session's id in GET /v1/sessions). */
  private readonly connectionId = randomUUID();
  private readonly gone = new AbortController();
  private readonly started: number;
  /** Workers that failed or refused this client: not selected again for it. */
  private readonly exclude: string[] = [];
  /** What the client sent while it waited (a WebSocket client sends nothing before its 101; anything it did goes to the worker after it). */
  private early = Buffer.alloc(0);
  private readonly hold = (chunk: Buffer) => (this.early = Buffer.concat([this.early, chunk]));
  private readonly hungUp = () => this.socket.destroy();
  /** The last answer a worker refused the session with, forwarded when no other worker took it. */
  private refusal: Buffer | undefined;
  /** versionsOnDemand was asked for the client's version (once per client); `unclaimed`: no worker process allows it. */
  private askedOnDemand = false;
  private unclaimed = false;

  constructor(
    private readonly parts: ProxyParts,
    private readonly req: IncomingMessage,
    private readonly socket: Socket,
    private readonly head: Buffer,
  ) {
    this.started = parts.ctx.clock.now();
  }

  async run(): Promise<void> {
    this.watchClient();
    const wanted = this.check();
    if (!wanted) return;
    this.socket.once('close', () => this.gone.abort(HUNG_UP));
    if (wanted.sessionId) return this.attach(wanted.sessionId);
    for (let attempt = 1; attempt <= this.parts.ctx.config.dialAttempts; ) {
      const chosen = await this.admit(wanted);
      if (chosen === 'no attempt used') continue;
      if (!chosen) return;
      const next = await this.connect(chosen, wanted, attempt);
      if (!next) return;
      if (next === 'attempt used') attempt++;
    }
    this.giveUp(wanted.browserType);
  }

  /** Answers the client with an error and ends it; undefined, for the caller to return. */
  private answer(code: number, message: string, retryAfter?: number, extra?: Record<string, unknown>, headers?: string[]): undefined {
    rejectUpgrade(this.socket, code, message, retryAfter, extra, headers);
    return undefined;
  }

  /**
   * Tracks the socket, and reads the client while it waits, so a client that hangs up is
   * seen at once (its queue place and slot given back) rather than at its next write.
   */
  private watchClient(): void {
    const { socket } = this;
    this.parts.sockets.add(socket);
    socket.once('close', () => this.parts.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.on('data', this.hold);
    socket.once('end', this.hungUp);
  }

  /** What the client wants, or undefined once it has been answered why it cannot have it. */
  private check(): Wanted | undefined {
    const { config } = this.parts.ctx;
    const url = new URL(this.req.url ?? '/', 'http://proxy');
    const sessionId = attachPathId(url.pathname);
    const protocol = sessionId ? 'playwright' : Object.hasOwn(PATHS, url.pathname) ? PATHS[url.pathname]! : undefined;
    if (!protocol) {
      return this.answer(404, `no such path ${url.pathname}; connect to ws://HOST:PORT/?browser=chromium (Playwright), ws://HOST:PORT/cdp (Puppeteer, connectOverCDP), ws://HOST:PORT/bidi?browser=firefox (WebDriver BiDi) or ws://HOST:PORT/sessions/{id} (a session created with POST /v1/sessions)`);
    }
    if (!tokenAccepted(config.token, this.req, url, this.parts.apiKeys)) return this.answer(401, 'missing or wrong token');
    const problem = handshakeProblem(this.req);
    if (problem) return this.answer(problem.code, problem.message, undefined, undefined, problem.code === 426 ? ['Sec-WebSocket-Version: 13'] : []);
    if (!this.parts.redis.up) return this.answer(503, 'grid unavailable: cannot reach Redis', 5);
    if (sessionId) return { sessionId, protocol, browserType: 'chromium', version: '' }; // the session says which
    const browserType = protocol === 'cdp' ? 'chromium' : (url.searchParams.get('browser') ?? (protocol === 'bidi' ? 'firefox' : config.defaultBrowserType));
    if (!(browserTypes as readonly string[]).includes(browserType)) {
      return this.answer(400, `unknown browser "${browserType}"; expected one of ${browserTypes.join(', ')}`);
    }
    if (protocol === 'bidi' && browserType !== 'firefox') {
      return this.answer(400, `browser "${browserType}" is not served over WebDriver BiDi; /bidi serves firefox: connect to ws://HOST:PORT/bidi?browser=firefox`);
    }
    // neither the DevTools protocol nor WebDriver BiDi depends on the client's Playwright version
    const version = protocol === 'playwright' ? clientVersion(this.req.headers['user-agent']) : '';
    return { protocol, browserType: browserType as BrowserType, version };
  }

  /** Attaches the client to a session created with POST /v1/sessions (attach.ts). */
  private attach(sessionId: string): Promise<void> {
    const takeHead = () => {
      this.socket.off('data', this.hold).off('end', this.hungUp);
      return Buffer.concat([this.head, this.early]);
    };
    return attach(this.parts, { req: this.req, socket: this.socket, takeHead, answer: (code, message) => this.answer(code, message) }, sessionId);
  }

  /** A worker chosen for the client; 'no attempt used' to choose again; undefined once the client is answered or gone. */
  private async admit(w: Wanted): Promise<Chosen | 'no attempt used' | undefined> {
    const { ctx, admission, metrics, leases, line } = this.parts;
    const turn = await line.enter(this.socket, this.gone.signal);
    if (!turn) return void metrics.connections.inc({ browser: w.browserType, result: 'client_left' });
    let admitted: Admitted;
    try {
      admitted = await admission.acquire(w.browserType, w.version, this.connectionId, this.exclude, this.gone.signal, w.protocol, turn);
    } catch (error) {
      ctx.logger.error('selection failed', { error: (error as Error).message });
      return this.answer(503, 'grid unavailable: cannot reach Redis', 5);
    } finally {
      turn();
    }
    if (admitted.kind === 'noversion' && !this.askedOnDemand && onDemandAllows(ctx.config, w.version)) {
      this.askedOnDemand = true;
      const waited = await this.startOnDemand(w);
      if (waited !== 'unclaimed') return waited;
      this.unclaimed = true;
    }
    if (admitted.kind === 'absent') return this.noWorker(w);
    if (admitted.kind !== 'ok') return this.notAdmitted(admitted, w);
    if (!this.gone.signal.aborted) return admitted;
    // it hung up while its worker was chosen: given back before a dial is spent on it
    metrics.connections.inc({ browser: w.browserType, result: 'client_left' });
    await leases.release(admitted.ref, this.connectionId, true);
    return undefined;
  }

  /** versionsOnDemand: a worker process starts servers of the client's version while it waits. */
  private async startOnDemand(w: Wanted): Promise<'no attempt used' | 'unclaimed' | undefined> {
    const { ctx, metrics } = this.parts;
    const { config } = ctx;
    let outcome;
    try {
      outcome = await awaitVersion(ctx, w.browserType, w.version, this.started + config.queueTimeout * 1000, this.gone.signal);
    } catch (error) {
      ctx.logger.error('asking for a Playwright version on demand failed', { error: (error as Error).message });
      return this.answer(503, 'grid unavailable: cannot reach Redis', 5);
    }
    switch (outcome.kind) {
      case 'gone':
        return undefined;
      case 'started':
        return 'no attempt used'; // the wait used no dial attempt
      case 'failed':
        metrics.connections.inc({ browser: w.browserType, result: 'on_demand_failed' });
        return this.answer(503, `Playwright ${w.version} could not be started on demand: ${outcome.why}`, 10);
      case 'timeout':
        metrics.connections.inc({ browser: w.browserType, result: 'timeout' });
        return this.answer(503, `No available servers: Playwright ${w.version} servers did not start within the queue timeout (${config.queueTimeout}s)`, 5);
      case 'unclaimed':
        return 'unclaimed';
    }
  }

  /** Answers a client asking for a browser no worker serves (no-worker.ts says what). */
  private async noWorker(w: Wanted): Promise<undefined> {
    this.parts.metrics.connections.inc({ browser: w.browserType, result: 'no_worker' });
    const { message, served } = await noWorkerAnswer(this.parts.ctx, w.protocol, w.browserType);
    return this.answer(503, message, 5, { served });
  }

  /** Answers a client admission could not give a worker (none of its version, queue full or timed out), or that left. */
  private notAdmitted(admitted: Exclude<Admitted, Chosen | { kind: 'absent' }>, w: Wanted): undefined {
    const { config } = this.parts.ctx;
    const count = (result: string) => this.parts.metrics.connections.inc({ browser: w.browserType, result });
    const { browserType, version } = w;
    switch (admitted.kind) {
      case 'noversion': {
        count('no_version');
        // a Firefox BiDi worker (browser-grid.bidi) is a firefox worker of no Playwright version
        const bidiOnly = browserType === 'firefox' ? ' (Firefox workers of browser-grid.bidi serve WebDriver BiDi clients on /bidi only)' : '';
        const served = admitted.versions.length ? `its ${browserType} workers speak Playwright ${admitted.versions.join(', ')}` : `no ${browserType} worker has a known Playwright version yet${bidiOnly}`;
        const newest = admitted.versions.at(-1);
        const message = `Playwright ${version} is not served by this grid: ${served}. Connect with a client of a served version${newest ? ` (e.g. npm i -D playwright@${newest})` : ''}.${this.unclaimed ? ` No worker process started it on demand: none allows ${version} in browser-grid.versionsOnDemand.` : ''}`;
        return this.answer(428, message, undefined, { clientVersion: version, versions: admitted.versions });
      }
      case 'full':
        count('queue_full');
        return this.answer(429, `all ${browserType} workers are busy and ${config.queueSize} clients are already waiting`, 5);
      case 'timeout':
        count('timeout');
        return this.answer(503, 'No available servers', Math.max(1, Math.ceil(config.queueTimeout / 6)));
      case 'gone':
        count('client_left');
        return undefined;
    }
  }

  /** Dials the chosen worker and relays the client to it; why to go round again, or undefined when the client is done. */
  private async connect(chosen: Chosen, w: Wanted, attempt: number): Promise<Again | undefined> {
    const { ctx, metrics, leases } = this.parts;
    metrics.selectSeconds.observe((ctx.clock.now() - this.started) / 1000);
    const dialed = await this.dial(chosen, w, attempt);
    if (typeof dialed === 'string') return dialed;
    if (this.gone.signal.aborted || this.socket.destroyed) {
      dialed.socket.destroy();
      await leases.release(chosen.ref, this.connectionId, true);
      return undefined;
    }
    if (dialed.status !== 101) {
      await this.refused(chosen, dialed, w);
      return 'attempt used';
    }
    this.socket.off('data', this.hold).off('end', this.hungUp);
    await relaySession(this.parts, { socket: this.socket, head: Buffer.concat([this.head, this.early]), connectionId: this.connectionId }, chosen, dialed, w);
    return undefined;
  }

  /** The worker's answer to the client's upgrade request, or why to choose another when it could not be reached. */
  private async dial(chosen: Chosen, w: Wanted, attempt: number): Promise<(Dialed & { lease?: Socket }) | Again> {
    const { ctx, leases, foreign } = this.parts;
    try {
      // a CDP client of a worker on this host is connected straight to its browser: one relay, not two
      const leasing = w.protocol === 'cdp' && ctx.config.cdpDirect && onThisHost(chosen.endpoint);
      return await (leasing ? dialLeased : dialUpgrade)(chosen.endpoint, this.req, w.protocol === 'bidi' ? BIDI_DIAL_TIMEOUT_MS : DIAL_TIMEOUT_MS);
    } catch (error) {
      if (!(error instanceof DialError)) throw error;
      await leases.release(chosen.ref, this.connectionId, true);
      this.exclude.push(chosen.ref);
      if (error.socketCode === 'ECONNREFUSED') {
        // Nothing listens there: its process is gone. It leaves the grid now, for every
        // proxy (its counters with it), rather than when its heartbeat goes stale; a live
        // one registers again at its next heartbeat. Such a dial uses no attempt.
        ctx.logger.warn('worker refused the connection: removed from the grid; trying another', { worker: chosen.ref, error: error.message });
        await foreign.departed(chosen.ref);
        return 'no attempt used';
      }
      ctx.logger.warn('dial failed; trying another worker', { worker: chosen.ref, attempt, error: error.message });
      return 'attempt used';
    }
  }

  /**
   * The worker refused the session itself (428: its Playwright version is not the client's).
   * Given back whole, so it is not penalised; the client tries the next worker of its version.
   */
  private async refused(chosen: Chosen, dialed: Dialed, w: Wanted): Promise<void> {
    const { ctx, metrics, leases } = this.parts;
    metrics.connections.inc({ browser: w.browserType, result: `worker_${dialed.status}` });
    dialed.socket.destroy();
    await leases.release(chosen.ref, this.connectionId, true);
    this.exclude.push(chosen.ref);
    this.refusal = dialed.response;
    const spoken = /server version: v(\d+\.\d+)/.exec(dialed.response.toString('utf8'))?.[1];
    ctx.logger.warn('worker refused the session; trying another', { worker: chosen.ref, status: dialed.status, clientVersion: w.version, serverVersion: spoken });
    if (spoken) await fileVersion(ctx, chosen.ref, spoken).catch(() => {});
  }

  /** Every dial attempt was spent: the last worker's refusal, or a 502. */
  private giveUp(browserType: BrowserType): void {
    if (this.refusal) {
      if (!this.socket.destroyed) this.socket.end(this.refusal);
      return;
    }
    this.parts.metrics.connections.inc({ browser: browserType, result: 'dial_failed' });
    this.answer(502, `could not reach a ${browserType} worker after ${this.parts.ctx.config.dialAttempts} attempts`);
  }
}
