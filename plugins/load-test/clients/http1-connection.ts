// One user's own HTTP/1.1 connection to one origin: a socket (net or tls), a
// request written as one buffer, the response read by http-parser-js (the
// parser autocannon uses). It takes undici's place for the users' own
// connections because on a fast server a worker's requests per second are its
// CPU over what one request costs, and undici's Client costs more per request
// than the socket and this parser (bench/results/load.md says by how much).
// One request at a time, as the user's connection carries it (pipelining 1);
// the shared connections (a user's concurrent requests, `connections` N > 0)
// stay on undici.
//
// It speaks to the request the way an undici dispatcher does (onConnect,
// onHeaders, onData, onComplete, onError: http-client.ts's Exchange), and
// keeps undici's conventions where a user sees them: `host` and
// `connection: keep-alive` sent, an error code (ECONNREFUSED, UND_ERR_SOCKET
// for a connection closed mid-response), an idle connection not reused past
// the server's keep-alive hint.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type * as HttpParserJs from 'http-parser-js';
import { lazyModule } from '../../../entries/plugin.ts';

// CommonJS, so required (lazyModule), not imported: Node's ESM import of a
// CommonJS package parses it for export names, which each user thread paid.
const httpParserJs = lazyModule<typeof HttpParserJs>('http-parser-js');

/** What http-client.ts's Exchange is to a dispatcher. */
export interface Http1Handler {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(statusCode: number, rawHeaders: string[]): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  onError(err: Error): void;
}

export interface Http1Request {
  method: string;
  /** Path and query, already escaped (http-targets.ts). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** An idle connection is not reused past this (ms), unless the server's keep-alive hint says less: undici's default. */
const IDLE_MS = 4_000;
const FORBIDDEN = /[\r\n]/;

interface ParsedHead {
  statusCode: number;
  headers: string[];
  versionMinor: number;
}

export class Http1Connection {
  private socket: Socket | undefined;
  private readonly parser = new (httpParserJs().HTTPParser)(httpParserJs().HTTPParser.RESPONSE);
  private handler: Http1Handler | undefined;
  private method = '';
  private keepAlive = true;
  /** The response's final head has been read (a 1xx before it completes as a message of its own). */
  private finalHead = false;
  private idleSince = 0;
  private idleLimit = IDLE_MS;
  /** Heads of requests without headers or body, by their request object (http-targets.ts keeps one per path and method). */
  private readonly plainHeads = new WeakMap<Http1Request, Buffer>();
  /** The last keep-alive header seen and the idle limit it gave (servers send the same one every time). */
  private keepAliveHint: string | undefined;
  private readonly url: URL;
  private closed = false;

  constructor(origin: string) {
    this.url = new URL(origin);
    const { HTTPParser } = httpParserJs();
    // An object, or (once any user of the package in this process read HTTPParser.kOnExecute) positional values.
    this.parser[HTTPParser.kOnHeadersComplete] = (info: ParsedHead | number, versionMinor?: number, headers?: string[], _m?: unknown, _u?: unknown, statusCode?: number) =>
      this.onHead(typeof info === 'object' ? info : { versionMinor: versionMinor!, headers: headers!, statusCode: statusCode! });
    this.parser[HTTPParser.kOnBody] = (chunk: Buffer, start: number, length: number) => {
      this.handler?.onData(start === 0 && length === chunk.length ? chunk : chunk.subarray(start, start + length));
    };
    this.parser[HTTPParser.kOnMessageComplete] = () => this.onMessageComplete();
  }

  /** Sends one request; the handler hears of its response or its error. The caller sends one at a time. */
  dispatch(request: Http1Request, handler: Http1Handler): void {
    this.handler = handler;
    this.method = request.method;
    handler.onConnect(this.abort);
    if (this.handler !== handler) return; // aborted at once
    let head: Buffer;
    try {
      head = this.head(request);
    } catch (err) {
      return this.fail(err as Error, false);
    }
    if (this.socket && (this.socket.destroyed || performance.now() - this.idleSince > this.idleLimit)) this.drop();
    const socket = this.socket ?? this.open();
    if (request.body === undefined) socket.write(head);
    else {
      socket.cork();
      socket.write(head);
      socket.write(request.body);
      socket.uncork();
    }
  }

  /** Closes the connection once its request (if any) is answered. */
  close(): Promise<void> {
    this.closed = true;
    if (!this.handler) this.drop();
    return Promise.resolve();
  }

  private head(request: Http1Request): Buffer {
    const { method, path, headers, body } = request;
    if (headers === undefined && body === undefined) {
      let plain = this.plainHeads.get(request);
      if (!plain) this.plainHeads.set(request, (plain = Buffer.from(`${requestLine(method, path)}host: ${this.url.host}\r\nconnection: keep-alive\r\n\r\n`, 'latin1')));
      return plain;
    }
    let text = `${requestLine(method, path)}host: ${this.url.host}\r\nconnection: keep-alive\r\n`;
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (FORBIDDEN.test(name) || FORBIDDEN.test(value)) throw new TypeError(`invalid header ${JSON.stringify(name)}: it holds a line break`);
      const lower = name.toLowerCase();
      if (lower === 'host' || lower === 'connection' || lower === 'content-length' || lower === 'transfer-encoding') continue; // the connection's own
      text += `${name}: ${value}\r\n`;
    }
    if (body !== undefined) text += `content-length: ${typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength}\r\n`;
    return Buffer.from(`${text}\r\n`, 'latin1');
  }

  private open(): Socket {
    const { hostname, protocol } = this.url;
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    const port = Number(this.url.port) || (protocol === 'https:' ? 443 : 80);
    const socket =
      protocol === 'https:'
        ? tlsConnect({ host, port, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] })
        : netConnect({ host, port });
    socket.setNoDelay(true);
    this.parser.reinitialize(httpParserJs().HTTPParser.RESPONSE);
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      const result = this.parser.execute(chunk);
      if (result instanceof Error) this.fail(Object.assign(new Error(`invalid HTTP response: ${result.message}`), { code: 'HPE_INVALID' }));
    });
    socket.on('end', () => {
      if (this.socket !== socket) return;
      // A response read until the connection closed ends here.
      if (this.handler) this.parser.finish();
      if (this.handler) this.fail(socketClosed());
      else this.drop();
    });
    socket.on('error', (err) => {
      if (this.socket === socket) this.fail(err);
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      if (this.handler) this.fail(socketClosed());
      else this.socket = undefined;
    });
    this.socket = socket;
    return socket;
  }

  private onHead(head: ParsedHead): number {
    const { statusCode } = head;
    // A 1xx (103 Early Hints, 100 Continue) is followed by the final response on the same request.
    if (statusCode < 200) return 1;
    this.finalHead = true;
    const connection = headerValue(head.headers, 'connection')?.toLowerCase() ?? '';
    this.keepAlive = head.versionMinor >= 1 ? !connection.includes('close') : connection.includes('keep-alive');
    const keepAlive = headerValue(head.headers, 'keep-alive');
    if (keepAlive !== this.keepAliveHint) {
      this.keepAliveHint = keepAlive;
      const hint = /timeout=(\d+)/.exec(keepAlive ?? '');
      this.idleLimit = hint ? Math.min(IDLE_MS, Math.max(0, Number(hint[1]) * 1000 - 1000)) : IDLE_MS;
    }
    this.handler?.onHeaders(statusCode, head.headers);
    // No body: HEAD, 204 and 304 (http-parser-js would read a 204 without a length until the connection closes).
    return this.method === 'HEAD' || statusCode === 204 || statusCode === 304 ? 1 : 0;
  }

  private onMessageComplete(): void {
    const handler = this.handler;
    if (!handler || !this.finalHead) return;
    this.finalHead = false;
    this.handler = undefined;
    this.idleSince = performance.now();
    if (!this.keepAlive || this.closed) this.drop();
    handler.onComplete();
  }

  /** Handed to each request (onConnect): aborts the one in flight, if any (a request that is done does not call it). */
  private readonly abort = (err?: Error) => {
    if (this.handler) this.fail(err ?? new Error('aborted'));
  };

  private fail(err: Error, dropSocket = true): void {
    const handler = this.handler;
    this.handler = undefined;
    this.finalHead = false;
    if (dropSocket) this.drop();
    handler?.onError(err);
  }

  private drop(): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
  }
}

function requestLine(method: string, path: string): string {
  if (FORBIDDEN.test(path) || FORBIDDEN.test(method)) throw new TypeError(`invalid request line: ${JSON.stringify(`${method} ${path}`)}`);
  return `${method} ${path} HTTP/1.1\r\n`;
}

function headerValue(headers: string[], name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.length === name.length && headers[i]!.toLowerCase() === name) return headers[i + 1];
  return undefined;
}

function socketClosed(): Error {
  return Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
}
