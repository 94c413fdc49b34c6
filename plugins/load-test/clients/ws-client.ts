// The scenario's WebSocket client (user.ws), on the ws package. What it
// records, under the connection's path (or the metric given to connect):
// - "ws connect PATH": the opening handshake, timed (a failure is an error);
// - "ws PATH": each request(): a message sent and the reply it waits for,
//   timed; a reply that does not come in time, or a close, is an error;
// - "ws sent PATH" / "ws received PATH": every message, counted.
// The first two are requests (in the total), the counts are the scenario's
// own metrics. Connections close when their user stops (the hard stop closes
// them at once). Like the HTTP client, connect and request return instead of
// throwing.
import type WebSocket from 'ws';
import { lazyModule } from '../../../entries/plugin.ts';
import type { MetricsRecorder } from '../metrics/recorder.ts';
import { ScenarioError } from '../errors.ts';

export type WsMessage = string | Buffer;

export interface WsConnectOptions {
  /** Name the connection's metrics use instead of its path. */
  metric?: string;
  headers?: Record<string, string>;
  protocols?: string | string[];
  /** Fails the handshake after this many ms (default 10 s). */
  timeout?: number;
}

export interface WsRequestOptions {
  /** Metric name of the round trip (default "ws PATH"). */
  metric?: string;
  /** How long to wait for the reply (default 10 s). */
  timeout?: number;
  /** Which message is the reply (default: the next one to arrive). */
  match?(message: WsMessage): boolean;
}

export interface WsReply {
  ok: boolean;
  data?: WsMessage;
  latency: number;
  /** 'timeout', 'closed', when it failed. */
  error?: string;
}

/** Messages kept for next() at most; older ones make room. */
// ws is CommonJS, so required (lazyModule), not imported: Node's ESM import of a
// CommonJS package parses it for export names, which each user thread paid.
const ws = lazyModule<typeof WebSocket>('ws');
const MAX_QUEUED = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;

export class WsClient {
  private readonly open = new Set<WsConnection>();

  constructor(
    private readonly recorder: MetricsRecorder,
    /** What paths resolve against (ws:// or http:// forms), when the test has one. */
    private readonly baseUrl: string | undefined,
    signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.closeAll(), { once: true });
  }

  /** Opens a connection; `url` is a ws(s):// URL or a path against the base URL. Check `ok` before sending. */
  connect(url: string, options: WsConnectOptions = {}): Promise<WsConnection> {
    const target = this.baseUrl ? new URL(url, this.baseUrl) : new URL(url);
    if (target.protocol === 'http:' || target.protocol === 'https:') target.protocol = target.protocol === 'http:' ? 'ws:' : 'wss:';
    const name = options.metric ?? target.pathname;
    const started = performance.now();
    const socket = new (ws())(target, options.protocols, { headers: options.headers, handshakeTimeout: options.timeout ?? DEFAULT_TIMEOUT_MS });
    const connection = new WsConnection(socket, name, this.recorder, () => this.open.delete(connection));
    this.open.add(connection);
    return new Promise((resolve) => {
      const done = (error: string | undefined) => {
        socket.off('open', onOpen);
        socket.off('error', onError);
        connection.opened(performance.now() - started, error);
        this.recorder.record(`ws connect ${name}`, connection.latency, error, 'http');
        resolve(connection);
      };
      const onOpen = () => done(undefined);
      const onError = (err: Error & { code?: string }) => done(err.code ?? err.message.split('\n')[0]!.slice(0, 120));
      socket.once('open', onOpen);
      socket.once('error', onError);
    });
  }

  /** Closes every connection of the user at once. */
  closeAll(): void {
    for (const connection of [...this.open]) connection.terminate();
  }
}

interface Waiter {
  match?(message: WsMessage): boolean;
  resolve(message: WsMessage | undefined): void;
}

export class WsConnection {
  ok = false;
  error: string | undefined;
  /** Milliseconds the handshake took. */
  latency = 0;
  sent = 0;
  received = 0;
  private readonly queue: WsMessage[] = [];
  /** request()s waiting for their reply, then next()s waiting for any message. */
  private readonly replies: Waiter[] = [];
  private readonly nexts: Waiter[] = [];
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    readonly name: string,
    private readonly recorder: MetricsRecorder,
    private readonly gone: () => void,
  ) {
    socket.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => this.arrived(toMessage(data, isBinary)));
    socket.on('close', () => this.ended());
    socket.on('error', () => {}); // after the handshake: the close that follows ends the connection
  }

  /** @internal the handshake's outcome */
  opened(latency: number, error: string | undefined): void {
    this.latency = latency;
    this.error = error;
    this.ok = error === undefined;
    if (!this.ok) this.ended();
  }

  /** Sends a message (an object is sent as JSON); throws when the connection is not open. */
  send(data: string | Uint8Array | object): void {
    if (this.socket.readyState !== ws().OPEN) {
      throw new ScenarioError(`WebSocket ${this.name} is not open${this.error ? ` (${this.error})` : ''}`, { code: 'COORD_ERR_LOAD_TEST_WS_NOT_OPEN' });
    }
    this.socket.send(typeof data === 'string' || data instanceof Uint8Array ? data : JSON.stringify(data));
    this.sent += 1;
    this.recorder.record(`ws sent ${this.name}`, 0);
  }

  /** The next message (queued ones first), or undefined after timeoutMs or once the connection has closed. */
  next(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<WsMessage | undefined> {
    if (this.queue.length) return Promise.resolve(this.queue.shift());
    if (this.closed) return Promise.resolve(undefined);
    return this.wait(this.nexts, undefined, timeoutMs);
  }

  /** Sends a message and waits for its reply: the first message after it that `match` accepts. Timed and recorded. */
  async request(data: string | Uint8Array | object, options: WsRequestOptions = {}): Promise<WsReply> {
    const metric = options.metric ?? `ws ${this.name}`;
    const started = performance.now();
    let reply: WsMessage | undefined;
    let error: string | undefined;
    if (this.closed) error = 'closed';
    else {
      const waiting = this.wait(this.replies, options.match, options.timeout ?? DEFAULT_TIMEOUT_MS);
      this.send(data);
      reply = await waiting;
      if (reply === undefined) error = this.closed ? 'closed' : 'timeout';
    }
    const latency = performance.now() - started;
    this.recorder.record(metric, latency, error, 'http');
    return error === undefined ? { ok: true, data: reply, latency } : { ok: false, latency, error };
  }

  /** Closes the connection (a normal close); resolves once it has closed. */
  close(code = 1000, reason?: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close(code, reason);
    });
  }

  /** @internal closes it at once (the user stopped) */
  terminate(): void {
    this.socket.terminate();
    this.ended();
  }

  private wait(list: Waiter[], match: Waiter['match'], timeoutMs: number): Promise<WsMessage | undefined> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        match,
        resolve: (message) => {
          clearTimeout(timer);
          const at = list.indexOf(waiter);
          if (at >= 0) list.splice(at, 1);
          resolve(message);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), timeoutMs);
      list.push(waiter);
    });
  }

  private arrived(message: WsMessage): void {
    this.received += 1;
    this.recorder.record(`ws received ${this.name}`, 0);
    const reply = this.replies.find((w) => !w.match || w.match(message));
    if (reply) return reply.resolve(message);
    const next = this.nexts[0];
    if (next) return next.resolve(message);
    if (this.queue.length >= MAX_QUEUED) this.queue.shift();
    this.queue.push(message);
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.gone();
    for (const waiter of [...this.replies, ...this.nexts]) waiter.resolve(undefined);
  }
}

function toMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): WsMessage {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  return isBinary ? bytes : bytes.toString();
}
