// A node: one session's own chromedriver and Chromium, and the HTTP endpoint
// the proxy forwards that session's commands to. It starts the driver
// (DSTART → DALIVE | DTIMEOUT | DFAILURE), creates the local session (LSINIT),
// publishes where it listens (session:ID:upstream), heartbeats, relays the
// client's commands (the session id swapped in the path; bodies untouched), and ends on
// DELETE /session (CLOSED), after sessionTermination idle seconds (STIMEOUT),
// on a fault (TERM, DFAILURE) or when the session ended elsewhere. Ending
// returns the slot atomically (terminateSession), then HALT. A session that
// asks for it is recorded meanwhile (recording/session-recording.ts). The
// driver's own session: driver-session.ts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Code } from '../session/log-codes.ts';
import type { Timeouts } from '../config.ts';
import type { Ctx } from '../context.ts';
import { driverCapabilities } from './driver-capabilities.ts';
import { createDriverSession, deleteDriverSession, driverHeaders, JSON_TYPE, matchedCapabilities } from './driver-session.ts';
import { DriverError, errorBody, type ErrorCode, errorStatus, WebDriverError } from '../errors.ts';
import { advertisedHost } from '../http/advertised-host.ts';
import { endsSession } from '../session/ends-session.ts';
import { startDriver, type Driver } from './driver.ts';
import type { WarmDriver } from './driver-pool.ts';
import { commandRelay, type Straight } from '../relay/command-relay.ts';
import { NODE_KEY_HEADER, randomSecret, sameSecret } from '../auth.ts';
import { closeServer, listen, readBody, sendError, sendJson } from '../http/serve.ts';
import { hop } from '../http/hop.ts';
import { relayBidi } from '../relay/bidi.ts';
import { CDP_VERSION, debuggerPort, relayCdp } from '../relay/cdp.ts';
import { isSeCommand, serveSeCommand } from '../se/commands.ts';
import type { SessionEvent } from '../se/event.ts';
import { DOWNLOADS_ENABLED, withDownloadFolder } from '../se/downloads.ts';
import { SessionFolder } from './session-folder.ts';
import { startRecording, finishRecording, type Recording } from '../recording/session-recording.ts';
import { refuseUpgrade } from '../relay/websocket.ts';
import { recordSession, restoreSession, sessionLost, type SessionRecord } from '../session/restore.ts';
import { appendLog, terminateSession } from '../scripts.ts';
import { rfc3339 } from '../session/time.ts';
import { recordingAsked, wantsRecording } from '../recording/settings.ts';
import { engineFor, type Engine } from './engines.ts';
import type { Capabilities } from '../session/capabilities.ts';

export interface NodeOptions {
  sessionId: string;
  orchestratorId: string;
  timeouts: Timeouts;
  /** A driver the orchestrator started ahead of time, if it has one. */
  takeWarmDriver?: () => WarmDriver | undefined;
  /** Offers the driver back once its session was deleted cleanly; true when taken (the node then leaves it running). */
  giveBackDriver?: (driver: Driver) => boolean;
  /** Nodes serving in this process, by session id: the node is in it while it serves (the orchestrator's, which a proxy in the same process reads). */
  serving?: Map<string, SessionNode>;
}

export class SessionNode {
  /** Resolves with why the node ended, once it has released everything. */
  readonly finished: Promise<string>;
  private finish!: (why: string) => void;
  /** Resolves once the session is terminated and HALT logged (before the driver and endpoint are stopped). */
  private readonly released: Promise<void>;
  private release!: () => void;
  private readonly id: string;
  private readonly server = createServer((req, res) => void this.onRequest(req, res));
  /** The endpoint's socket: commands go to the driver as bytes; ending the session and anything else reach `server`. */
  /** What the proxy (and the manager) must send in NODE_KEY_HEADER: published in session:{id}:upstream, never shown by the API. */
  private readonly key = randomSecret();
  private readonly relay = commandRelay(this.server, (head) => {
    const prefix = `/session/${this.id}`;
    if (!head.target.startsWith(prefix) || !sameSecret(head.headers.get(NODE_KEY_HEADER) ?? '', this.key)) return undefined;
    return this.straight(head.method, head.target.slice(prefix.length));
  });
  private driver?: Driver;
  private driverSessionId = '';
  /** The driver's session was deleted cleanly: the driver could serve another session. */
  private driverFree = false;
  /** Where commands go, and the headers most of them take, built once the driver is up. */
  private driverTarget?: { host: string; port: number; origin: string; headers: Record<string, string> };
  private driverWebSocket = '';
  /** Chromium's DevTools port (se/cdp goes there), when the browser has one. */
  private devtoolsPort?: number;
  /** The session's folder on this machine (uploads, downloads), removed when the node ends. */
  private readonly folder: SessionFolder;
  /** Where Chromium saves downloads, when the session asked for se:downloadsEnabled. */
  private downloads?: string;
  private chromePid = 0;
  /** The engine the session's browserName names (engines.ts), known once its capabilities are read. */
  private engine?: Engine;
  /** Whether the matched capabilities (or the grid's default) ask for a screen recording. */
  private recordWanted = false;
  /** The recording, starting beside the session rather than before it: creating a session waits for no DevTools round trip. */
  private recording?: Promise<Recording | undefined>;
  private lastSeen = 0;
  private lastWritten = 0;
  private lastBeat = Date.now();
  private served = false;
  /** The session's keys once served: written back if Redis loses them (session/restore.ts). */
  private record?: SessionRecord;
  private ending?: Promise<void>;
  private timers: ReturnType<typeof setInterval>[] = [];
  private readonly sockets = new Set<Socket>();
  /** Requests on the endpoint whose answer is not written yet, and who waits for there to be none. */
  private answering = 0;
  private allAnswered?: () => void;

  constructor(
    private readonly ctx: Ctx,
    private readonly options: NodeOptions,
  ) {
    this.id = options.sessionId;
    this.folder = new SessionFolder(options.sessionId);
    this.finished = new Promise((resolve) => (this.finish = resolve));
    this.released = new Promise((resolve) => (this.release = resolve));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void this.onUpgrade(req, socket, head));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** A Session Event API event (se/event.ts): kept in the session's log as EVENT, with its place in the recording when there is one; resolves to when. */
  private async logEvent(event: SessionEvent): Promise<string> {
    const at = Date.now();
    const recording = this.recording && (await Promise.race([this.recording, undefined]));
    const offset = recording?.recorder.offsetAt(at);
    await appendLog(this.ctx, this.id, 'node', 'EVENT', JSON.stringify(offset === undefined ? event : { ...event, offset: Math.round(offset * 1000) / 1000 }));
    return new Date(at).toISOString();
  }

  private log(code: Code, meta = ''): Promise<void> {
    return appendLog(this.ctx, this.id, 'node', code, meta).catch((error) => this.ctx.logger.warn('session log write failed', { sessionId: this.id, code, error: (error as Error).message }));
  }

  /**
   * Boots the node: resolves once the local session exists and is published,
   * or rejects (after ending the session) when the driver or session fails.
   */
  async start(): Promise<void> {
    const { ctx, id } = this;
    const { config } = ctx;
    // steps that do not depend on each other overlap: each Redis round trip is time the client waits
    // the capabilities name the engine (its driver, browser and options); a refusal ends the session once the node is up
    const [, port, requested] = await Promise.all([
      this.log('BOOT', `orchestrator ${this.options.orchestratorId}, pid ${process.pid}`),
      listen(this.relay.server, config.orchestrator.nodeHost, 0, `node of session ${id}`),
      this.requestedCapabilities().catch((error: Error) => error),
    ]);
    if (requested instanceof Error) {
      await this.end('DFAILURE', requested.message);
      throw requested;
    }
    const caps = requested;
    const engine = this.engine!;
    // warm drivers are chromedrivers
    const warm = engine.name === 'chrome' ? this.options.takeWarmDriver?.() : undefined;
    const started = Date.now();
    await Promise.all([
      this.beat(),
      this.log('DSTART', warm ? `${engine.driverBinary}: a warm driver, started ${started - warm.readyAt} ms ahead` : `${engine.driverBinary}${engine.needsDisplay ? ` on an Xvfb display of its own (${config.orchestrator.xvfb})` : ''}`),
    ]);
    this.timers.push(setInterval(() => void this.beat(), config.heartbeat.interval * 1000));
    if (warm) {
      this.driver = warm.driver;
    } else {
      try {
        this.driver = await startDriver({
          binary: engine.driverBinary,
          timeoutMs: this.options.timeouts.driverStartup * 1000,
          logFile: config.orchestrator.driverLogFile,
          signal: ctx.signal,
          xvfb: engine.needsDisplay ? config.orchestrator.xvfb : undefined,
        });
      } catch (error) {
        const timeout = error instanceof DriverError && error.kind === 'timeout';
        await this.end(timeout ? 'DTIMEOUT' : 'DFAILURE', (error as Error).message);
        throw error;
      }
    }
    if (this.ending) return this.abandon(); // the session ended while the driver started
    const driver = this.driver;
    void driver.exited.then((why) => {
      if (!this.ending && this.driver === driver) void this.end('DFAILURE', why);
    });

    try {
      await this.log('DALIVE', `port ${driver.port}, pid ${driver.pid}, ${Date.now() - started} ms`);
      const created = await createDriverSession(driver.port, caps, ctx.signal, this.options.timeouts.nodeStartup * 1000);
      this.driverSessionId = created.sessionId;
      this.driverTarget = { host: '127.0.0.1', port: driver.port, origin: `http://127.0.0.1:${driver.port}`, headers: driverHeaders(driver.port) };
      if (this.ending) return this.abandon();
      const actual = created.capabilities;
      this.driverWebSocket = typeof actual.webSocketUrl === 'string' ? actual.webSocketUrl : '';
      // Selenium Grid's extensions, announced as Selenium Grid does (the proxy adds se:cdp, the URL as the client reaches it)
      this.devtoolsPort = debuggerPort(actual);
      if (this.devtoolsPort && typeof actual.browserVersion === 'string') actual[CDP_VERSION] = actual.browserVersion;
      if (this.downloads) actual[DOWNLOADS_ENABLED] = true;
      this.chromePid = Number(actual['goog:processID']) || 0;
      if (this.recordWanted) {
        // the video starts before the client's first command (its first navigation included); a recorder
        // slow to attach delays the session by RECORDER_WAIT_MS at most and catches up afterwards
        this.recording = startRecording(ctx, id, actual);
        await Promise.race([this.recording, new Promise((resolve) => setTimeout(resolve, RECORDER_WAIT_MS).unref())]);
      }
      await Promise.all([
        ctx.backend.send(['HSET', ctx.keys.sessionCapabilities({ sessionId: id }), 'actual', JSON.stringify(actual)]),
        this.log('LSINIT', `driver session ${this.driverSessionId}`),
      ]);
      this.lastSeen = Date.now();
      this.options.serving?.set(this.id, this);
      // last: the manager serves the client once it sees this; the push wakes it (it waits in a blocking pop)
      const host = advertisedHost(config.orchestrator.nodeHost, config.orchestrator.advertiseHost);
      await ctx.backend.multi([
        ['HSET', ctx.keys.sessionUpstream({ sessionId: id }), 'host', host, 'port', port, 'driverSessionID', this.driverSessionId, 'key', this.key],
        ['RPUSH', ctx.keys.sessionReady({ sessionId: id }), `${host}:${port}`],
      ]);
    } catch (error) {
      await this.end('DFAILURE', (error as Error).message);
      throw error;
    }
    this.timers.push(setInterval(() => this.checkIdle(), Math.min(1000, this.options.timeouts.sessionTermination * 250)));
  }

  /** The node ended (its session ended elsewhere) while it was starting: release what start() got after end() ran, and fail. */
  private async abandon(): Promise<never> {
    await this.ending;
    if (this.driverSessionId && this.driver) await deleteDriverSession(this.driver.port, this.driverSessionId);
    this.driverSessionId = '';
    await this.driver?.stop();
    throw new WebDriverError('the session ended while its node was starting', { code: 'COORD_ERR_WEBDRIVER_NODE_ABANDONED' });
  }

  /**
   * What to ask the driver for: the set the manager matched, as its engine's
   * driver takes it (with the downloads folder when a Chrome session wants
   * managed downloads). A recording asked of an engine the grid cannot record
   * is refused here, in words, rather than served without one.
   */
  private async requestedCapabilities(): Promise<Capabilities> {
    const { ctx } = this;
    const { caps: matched, browserName } = await matchedCapabilities(ctx, this.id, this.options.orchestratorId);
    const engine = engineFor(ctx.config.orchestrator, browserName);
    this.engine = engine;
    const asked = recordingAsked(matched);
    if (asked && !engine.recordable) {
      throw new WebDriverError(`se:recordVideo: ${engine.browserName} (${engine.name}) sessions cannot be recorded by this grid (recordings come from Chrome's DevTools screencast): ask without se:recordVideo, or for browserName chrome`, { code: 'COORD_ERR_WEBDRIVER_NOT_RECORDABLE' });
    }
    this.recordWanted = engine.recordable && wantsRecording(matched, ctx.config.recording.enabled);
    const caps = driverCapabilities(matched, engine);
    if (matched[DOWNLOADS_ENABLED] !== true || engine.name !== 'chrome') return caps;
    this.downloads = this.folder.sub('downloads');
    return withDownloadFolder(caps, this.downloads);
  }

  /** Heartbeat; also notices a session that ended elsewhere, or a manager that left before serving it. */
  private async beat(): Promise<void> {
    const { ctx, id } = this;
    if (this.ending) return;
    try {
      const now = Date.now();
      const commands: [string, ...(string | number)[]][] = [
        ['SET', ctx.keys.sessionNodeHeartbeat({ sessionId: id }), rfc3339(now), 'EX', Math.ceil(ctx.config.heartbeat.nodeTtl)],
        ['SISMEMBER', ctx.keys.sessionsActive(), id],
        ['HEXISTS', ctx.keys.sessionStatus({ sessionId: id }), 'aliveAt'],
        ['EXISTS', ctx.keys.sessionManagerHeartbeat({ sessionId: id })],
      ];
      if (this.lastSeen > this.lastWritten) {
        commands.push(['HSET', ctx.keys.sessionDownstream({ sessionId: id }), 'lastSeen', rfc3339(this.lastSeen)]);
        this.lastWritten = this.lastSeen;
      }
      const [, active, alive, manager] = await ctx.backend.pipeline(commands);
      if (active === 0) {
        if (await this.restoreIfLost()) return;
        return void this.end(undefined, 'the session ended elsewhere');
      }
      if (alive === 1) {
        this.served = true;
        this.record ??= await recordSession(ctx, id);
      } else if (manager === 0 && !this.served) void this.end('TERM', 'the manager left before the client was served');
      this.lastBeat = now;
    } catch (error) {
      ctx.logger.warn('node heartbeat failed', { sessionId: id, error: (error as Error).message });
      // past its heartbeat's TTL the grid counts this node dead and reuses the slot: stop serving
      if (Date.now() - this.lastBeat > ctx.config.heartbeat.nodeTtl * 1000) void this.end(undefined, 'Redis unreachable for longer than the heartbeat TTL');
    }
  }

  /** Writes the session's keys back if Redis lost them (it restarted empty); true when it did. */
  async restoreIfLost(): Promise<boolean> {
    const { ctx, id } = this;
    if (!this.record || this.ending || !(await sessionLost(ctx, id))) return false;
    await restoreSession(ctx, id, this.record, ctx.config.heartbeat.nodeTtl);
    ctx.logger.info('restored the session keys Redis had lost', { sessionId: id, slot: this.record.slot });
    return true;
  }

  private checkIdle(): void {
    if (this.ending || !this.lastSeen) return;
    const idle = Date.now() - this.lastSeen;
    if (idle > this.options.timeouts.sessionTermination * 1000) void this.end('STIMEOUT', `no command, BiDi message or pong for ${Math.round(idle / 1000)} s`);
  }

  /** Only the grid (the proxy, the manager) talks to a node: it knows the node's key. */
  private fromGrid(req: IncomingMessage): boolean {
    const sent = req.headers[NODE_KEY_HEADER];
    return typeof sent === 'string' && sameSecret(sent, this.key);
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (!this.fromGrid(req)) {
      res.shouldKeepAlive = false;
      return sendError(res, 'unauthorized', 'this is a node of the grid: send commands to the proxy');
    }
    if (url === '/status') {
      return sendJson(res, 200, { value: { ready: !!this.driverSessionId && !this.ending, message: this.driverSessionId ? 'serving its session' : 'starting' } });
    }
    let body: Buffer;
    try {
      body = await readBody(req, this.ctx.config.proxy.bodyLimit);
    } catch (error) {
      return sendError(res, error as never);
    }
    this.answering += 1;
    let done = false;
    const answered = () => {
      if (done) return;
      done = true;
      if (--this.answering === 0) this.allAnswered?.();
    };
    res.once('finish', answered).once('close', answered);
    const answer = await this.serve(req.method ?? 'GET', url, req.headers['content-type'], body);
    if (res.destroyed) return answered();
    res.writeHead(answer.status, { 'content-type': answer.contentType, 'content-length': answer.body.length, 'cache-control': 'no-cache' }).end(answer.body);
  }

  /** Resolves once every request on the endpoint has its answer written (the DELETE that ended the session among them), or after `ms`. */
  private answersWritten(ms: number): Promise<void> {
    if (this.answering === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.allAnswered = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * One client command for this session, transport aside: the HTTP endpoint
   * calls it, and so does a proxy in the same process (no socket hop). The
   * session id is swapped in the path; bodies pass as they are. DELETE /session answers once the slot
   * is back, so a client that quits and asks again finds it free.
   */
  async serve(method: string, url: string, contentType: string | undefined, body: Buffer): Promise<NodeAnswer> {
    const prefix = `/session/${this.id}`;
    if (!(url === prefix || url.startsWith(prefix + '/') || url.startsWith(prefix + '?')) || !this.driverSessionId || this.ending) {
      return failure('invalid session id', `no session ${/^\/session\/([^/?]+)/.exec(url)?.[1] ?? ''} on this node`);
    }
    this.lastSeen = Date.now();
    const rest = url.slice(prefix.length);
    if (isSeCommand(rest)) {
      const answer = await serveSeCommand(method, rest, body, { folder: this.folder, downloads: this.downloads, logEvent: (event) => this.logEvent(event) });
      return { status: answer.status, contentType: JSON_TYPE, body: answer.body };
    }
    const closing = endsSession(method, rest);
    const driverId = this.driverSessionId;
    const driver = this.driverTarget!;
    // bodies pass as they are, both ways: only the path names a session (the grid's id outside, the driver's inside)
    let answer;
    try {
      const headers = contentType === undefined || contentType === JSON_TYPE ? driver.headers : driverHeaders(driver.port, contentType);
      answer = await hop(driver, method, `/session/${driverId}${url.slice(prefix.length)}`, headers, body);
    } catch (error) {
      if (!this.ending) void this.end('DFAILURE', `driver unreachable: ${(error as Error).message}`);
      return failure('unknown error', `the driver of session ${this.id} did not answer: ${(error as Error).message}`);
    }
    const reply = { status: answer.status, contentType: String(answer.headers['content-type'] ?? JSON_TYPE), body: answer.body };
    if (closing) {
      this.driverSessionId = ''; // the driver has ended it already
      this.driverFree = answer.status === 200;
      void this.end('CLOSED', 'DELETE /session by the client');
      await this.released;
    }
    return reply;
  }

  /**
   * Where a command relay (this node's, or the proxy's in the same process)
   * sends a command of this session as bytes: to the driver, the session id
   * swapped in the path. `rest` is the request target after /session/{id}. Undefined for
   * the command that ends the session (serve() ends the node with it), for
   * anything that is not a command, and while the node cannot take one. Counts
   * as activity.
   */
  straight(method: string, rest: string, answered: Straight['answered'] = () => {}): Straight | undefined {
    const path = rest.split('?')[0]!;
    if (!path.startsWith('/') || endsSession(method, path) || isSeCommand(path)) return undefined;
    if (!this.driverSessionId || this.ending || !this.driverTarget) return undefined;
    this.lastSeen = Date.now();
    const { host, port } = this.driverTarget;
    return { host, port, path: `/session/${this.driverSessionId}${rest}`, answered };
  }

  /** BiDi: /session/{id}/se/bidi → the driver's own WebSocket URL; CDP: /session/{id}/se/cdp → Chromium's browser endpoint. */
  private async onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    if (!this.fromGrid(req)) return refuseUpgrade(socket, 401, errorBody('unauthorized', 'this is a node of the grid: connect to the proxy'));
    if (req.url === `/session/${this.id}/se/cdp`) return this.relayCdp(req, socket, head);
    if (req.url !== `/session/${this.id}/se/bidi` || !this.driverWebSocket || this.ending) {
      return refuseUpgrade(socket, 404, errorBody('invalid session id', `no BiDi session ${req.url} on this node`));
    }
    this.lastSeen = Date.now();
    const target = new URL(this.driverWebSocket);
    // an open socket alone is not activity: what the client sends is (a message, or the pong to the relay's ping)
    const pingMs = this.pingInterval();
    await relayBidi(req, socket, head, { host: '127.0.0.1', port: this.driverTarget!.port, path: target.pathname, pingMs, activity: () => (this.lastSeen = Date.now()) });
    this.lastSeen = Date.now();
  }

  /** How often a WebSocket relay pings its client: a third of the idle timeout, within bounds. */
  private pingInterval(): number {
    return Math.min(BIDI_PING_MAX_MS, Math.max(BIDI_PING_MIN_MS, (this.options.timeouts.sessionTermination * 1000) / 3));
  }

  private async relayCdp(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    if (!this.devtoolsPort || this.ending) return refuseUpgrade(socket, 404, errorBody('invalid session id', `no CDP endpoint ${req.url} on this node`));
    this.lastSeen = Date.now();
    try {
      await relayCdp(req, socket, head, { port: this.devtoolsPort, pingMs: this.pingInterval(), activity: () => (this.lastSeen = Date.now()) });
    } catch (error) {
      refuseUpgrade(socket, 502, errorBody('unknown error', `Chromium's DevTools endpoint did not answer: ${(error as Error).message}`));
    }
    this.lastSeen = Date.now();
  }

  /**
   * Ends the node once: ends the driver's session, terminates the grid session
   * (slot back, logged with `code` unless it already ended elsewhere), HALT,
   * then stops the driver and the endpoint. `released` resolves after HALT.
   */
  end(code: Code | undefined, meta: string): Promise<void> {
    this.ending ??= (async () => {
      const { ctx, id } = this;
      this.options.serving?.delete(id);
      for (const timer of this.timers) clearInterval(timer);
      // the video ends with the page as the client left it: capture stops before the browser closes; ffmpeg finishes meanwhile
      const recorded = this.recording?.then((recording) => recording && finishRecording(ctx, id, recording));
      if (this.driverSessionId && this.driver) {
        this.driverFree = await deleteDriverSession(this.driver.port, this.driverSessionId);
        this.driverSessionId = '';
      }
      try {
        if (code) await terminateSession(ctx, id, { component: 'node', code, meta });
        await this.log('HALT', meta);
        await ctx.backend.send(['DEL', ctx.keys.sessionNodeHeartbeat({ sessionId: id })]);
      } catch (error) {
        ctx.logger.warn('node could not record its end', { sessionId: id, error: (error as Error).message });
      }
      this.release();
      const driver = this.driver;
      this.driver = undefined;
      if (this.chromePid) killQuietly(this.chromePid);
      // a chromedriver whose session was deleted cleanly may serve the next session; any other driver is stopped
      const reusable = !!driver && this.engine?.name === 'chrome' && this.driverFree && code !== 'DFAILURE' && driver.running;
      const reused = reusable && !!this.options.giveBackDriver?.(driver);
      if (!reused) await driver?.stop();
      await this.folder.remove();
      await this.answersWritten(ANSWER_GRACE_MS);
      for (const socket of this.sockets) socket.destroy(); // BiDi relays too: the server no longer tracks upgraded sockets
      this.relay.server.close();
      this.relay.closeAll();
      await closeServer(this.server);
      await recorded;
      ctx.logger.info('node ended', { sessionId: id, code: code ?? 'none', meta });
      this.finish(`${code ?? 'ended'}: ${meta}`);
    })();
    return this.ending;
  }
}

/** What a node answers a command with. */
export interface NodeAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** The BiDi relay pings its client this often (a third of the idle timeout, within these bounds). */
const BIDI_PING_MIN_MS = 500;
const BIDI_PING_MAX_MS = 30_000;

/** Longest a recorded session's creation waits for its recorder to attach. */
const RECORDER_WAIT_MS = 5000;

/** How long an ending node lets answers in flight (the client's DELETE above all) reach their clients before it closes its endpoint. */
const ANSWER_GRACE_MS = 2000;

function failure(error: ErrorCode, message: string): NodeAnswer {
  return { status: errorStatus[error], contentType: JSON_TYPE, body: Buffer.from(errorBody(error, message)) };
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
