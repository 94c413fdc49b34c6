// One client connection of the command relay (command-relay.ts): it takes
// the requests in order, one at a time; each whole request the router names
// goes straight to its driver or node as bytes, and everything else to the
// node:http server behind, over an in-memory socket. Once the relay cannot
// follow (a chunked request, a malformed head, an upgrade) node:http has the
// connection for good.
import type { Server as HttpServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { hostPort } from '../http/hop.ts';
import type { Router, Straight } from './command-relay.ts';
import { answerLength, HEAD_END, parseAnswerHead, parseRequestHead, readChunked, type AnswerHead, type RequestHead } from './http-frames.ts';
import { memorySocketPair, type MemorySocket } from './memory-socket.ts';
import type { SlowHeads } from './slow-heads.ts';

/** Head bytes the relay reads before it gives up and lets node:http answer (431). */
const HEAD_LIMIT = 64 * 1024;
/** Unhandled client bytes at which the relay stops reading the client until it catches up. */
const PAUSE_AT = 1024 * 1024;
const EMPTY: Buffer = Buffer.alloc(0);

/** Answers a connection with an error of the relay's own (W3C-shaped) and closes it, whatever the client still sends. */
function refuse(client: Socket, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ value: { error: status === 408 ? 'timeout' : 'unknown error', message, stacktrace: '' } });
  client.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  // a client that never reads nor closes does not keep the socket
  setTimeout(() => client.destroy(), 1000).unref();
}

/** An answer coming back from a driver or node, read whole before the client gets it. */
interface StraightAnswer {
  upstream: Socket;
  straight: Straight;
  method: string;
  /** The request as the client sent it: node:http takes it over if the upstream fails before answering. */
  request: Buffer;
  bytesIn: number;
  close: boolean;
  bytes: Buffer;
  head?: AnswerHead;
  length?: number | 'chunked' | 'close';
}

/** An answer node:http is writing, relayed as it comes. */
interface InsideAnswer {
  method: string;
  close: boolean;
  head: Buffer;
  /** Body bytes still to come, once the head is read. */
  left?: number;
}

/** One client connection of the relay: its requests in order, each sent straight or to node:http. */
export class ClientConnection {
  private pending: Buffer = EMPTY;
  private busy = false;
  private handedOver = false;
  private clientEnded = false;
  /** The next request goes to node:http whatever the router says (its straight attempt failed). */
  private insideNext = false;
  /** Body bytes of the current request node:http still has to get. */
  private toInside = 0;
  private inside?: MemorySocket;
  private insideAnswer?: InsideAnswer;
  private straightAnswer?: StraightAnswer;
  private readonly upstreams = new Map<string, Socket>();
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onInside = (chunk: Buffer) => this.fromInside(chunk);
  /** Runs while a request head is awaited: from the connection's start, and from the first byte of each later head. */
  private headTimer?: ReturnType<typeof setTimeout>;
  /** Fires when the awaited head turns slow (slowMs): from then on it counts against its client. */
  private slowTimer?: ReturnType<typeof setTimeout>;
  /** The client this connection's slow head is counted against, while it is. */
  private countedAs?: string;

  constructor(
    private readonly client: Socket,
    private readonly http: HttpServer,
    private readonly route: Router,
    idleMs: number,
    private readonly headTimeoutMs: number,
    private readonly slowMs: number,
    private readonly slow: SlowHeads,
  ) {
    client.setNoDelay(true);
    this.awaitHead();
    // idle: no bytes either way for idleMs; a request still being answered (a queued new session) or a
    // BiDi connection (handed over) is not idle however quiet it is
    // (the timer fires once per quiet spell; the next byte either way starts it again)
    client.setTimeout(idleMs);
    client.on('timeout', () => {
      if (!this.busy && !this.handedOver && !this.pending.length) client.destroy();
    });
    client.on('data', this.onData);
    client.on('end', () => {
      this.clientEnded = true;
      if (this.toInside > 0) this.inside?.end();
      this.next();
    });
    client.on('error', () => client.destroy());
    client.on('close', () => {
      this.headArrived();
      this.inside?.destroy();
      for (const upstream of this.upstreams.values()) upstream.destroy();
    });
  }

  private received(chunk: Buffer): void {
    if (this.toInside > 0) {
      const part = chunk.subarray(0, this.toInside);
      this.toInside -= part.length;
      this.inside!.write(part);
      chunk = chunk.subarray(part.length);
      if (!chunk.length) return;
    }
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.next();
    // a client far ahead of its answers waits (TCP pushes back) until the relay catches up
    if (this.pending.length > PAUSE_AT && !this.handedOver) this.client.pause();
  }

  /** Takes the next whole request head, if no answer is outstanding. */
  private next(): void {
    if (this.busy || this.handedOver || this.client.destroyed) return;
    if (this.client.isPaused()) this.client.resume();
    if (!this.pending.length) {
      if (this.clientEnded) this.client.end();
      return;
    }
    const end = this.pending.indexOf(HEAD_END);
    if (end === -1) {
      if (this.pending.length > HEAD_LIMIT || this.clientEnded) return this.handOver();
      return this.awaitHead();
    }
    this.headArrived();
    const head = parseRequestHead(this.pending.toString('latin1', 0, end));
    if (!head) return this.handOver();
    const size = end + 4 + head.length;
    const straight = this.pending.length >= size && !this.insideNext ? this.route(head) : undefined;
    this.insideNext = false;
    const request = this.pending.subarray(0, Math.min(size, this.pending.length));
    this.pending = this.pending.subarray(request.length);
    this.busy = true;
    if (straight) this.sendStraight(head, request, request.subarray(end + 4), straight);
    else this.sendInside(head, request, size - request.length);
  }

  /**
   * Starts the head timers unless they run: a head still incomplete after slowMs counts against its client
   * (429 and closed when the client already has its cap of slow heads); after the head timeout, 408.
   */
  private awaitHead(): void {
    if (this.headTimer || this.headTimeoutMs <= 0) return;
    const stillAwaited = () => !this.busy && !this.handedOver && !this.client.destroyed && this.pending.indexOf(HEAD_END) === -1;
    // a timer fires before the loop reads sockets: a busy process would judge bytes that came in time but are
    // not read yet; setImmediate runs after that read, so a head that arrived is seen (and its timers stopped)
    const headTimer: ReturnType<typeof setTimeout> = setTimeout(
      () =>
        setImmediate(() => {
          if (this.headTimer !== headTimer) return; // the head came meanwhile
          this.headTimer = undefined;
          if (stillAwaited()) refuse(this.client, 408, 'Request Timeout', `the request head did not arrive within ${this.headTimeoutMs / 1000} s`);
        }),
      this.headTimeoutMs,
    );
    this.headTimer = headTimer;
    if (this.slowMs <= 0 || this.slowMs >= this.headTimeoutMs) return;
    const slowTimer: ReturnType<typeof setTimeout> = setTimeout(
      () =>
        setImmediate(() => {
          if (this.slowTimer !== slowTimer) return;
          this.slowTimer = undefined;
          if (!stillAwaited()) return;
          const client = this.slow.clientOf(this.client.remoteAddress ?? '', this.pending);
          if (this.slow.enter(client)) return void (this.countedAs = client);
          clearTimeout(this.headTimer);
          this.headTimer = undefined;
          refuse(this.client, 429, 'Too Many Requests', `${client} already has ${this.slow.limit} connections whose request head is incomplete after ${this.slowMs / 1000} s`);
        }),
      this.slowMs,
    );
    this.slowTimer = slowTimer;
  }

  /** The awaited head is whole (or the connection is gone): its timers stop, and it no longer counts as slow. */
  private headArrived(): void {
    clearTimeout(this.headTimer);
    clearTimeout(this.slowTimer);
    this.headTimer = this.slowTimer = undefined;
    if (this.countedAs === undefined) return;
    this.slow.leave(this.countedAs);
    this.countedAs = undefined;
  }

  // ---- straight to a driver or node ----

  private sendStraight(head: RequestHead, request: Buffer, body: Buffer, straight: Straight): void {
    const type = head.headers.get('content-type');
    const upstream = this.upstreamFor(straight);
    this.straightAnswer = { upstream, straight, method: head.method, request, bytesIn: body.length, close: head.close, bytes: EMPTY };
    upstream.cork();
    upstream.write(`${head.method} ${straight.path} HTTP/1.1\r\nHost: ${hostPort(straight)}\r\n${straight.headers ?? ''}${type ? `Content-Type: ${type}\r\n` : ''}Content-Length: ${body.length}\r\n\r\n`, 'latin1');
    if (body.length) upstream.write(body);
    upstream.uncork();
  }

  /** A kept-alive connection to the target, or a new one. */
  private upstreamFor(target: { host: string; port: number }): Socket {
    const key = `${target.host}:${target.port}`;
    const known = this.upstreams.get(key);
    if (known && !known.destroyed && known.writable) return known;
    const upstream = connect(target.port, target.host);
    upstream.setNoDelay(true);
    upstream.on('data', (chunk: Buffer) => this.fromUpstream(upstream, chunk));
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => this.upstreamClosed(key, upstream));
    this.upstreams.set(key, upstream);
    return upstream;
  }

  private fromUpstream(upstream: Socket, chunk: Buffer): void {
    const answer = this.straightAnswer;
    if (!answer || answer.upstream !== upstream) return void upstream.destroy(); // nothing was asked of it
    answer.bytes = answer.bytes.length ? Buffer.concat([answer.bytes, chunk]) : chunk;
    if (!answer.head) {
      const end = answer.bytes.indexOf(HEAD_END);
      if (end === -1) return void (answer.bytes.length > HEAD_LIMIT && upstream.destroy());
      const head = parseAnswerHead(answer.bytes.toString('latin1', 0, end));
      if (!head) return void upstream.destroy();
      answer.head = head;
      answer.length = answerLength(head, answer.method);
      answer.bytes = answer.bytes.subarray(end + 4);
    }
    if (answer.length === 'close') return; // the body ends with the connection (upstreamClosed)
    let body: Buffer;
    if (answer.length === 'chunked') {
      let whole;
      try {
        whole = readChunked(answer.bytes);
      } catch {
        return void upstream.destroy();
      }
      if (!whole) return;
      body = whole;
    } else {
      if (answer.bytes.length < answer.length!) return;
      body = answer.bytes.subarray(0, answer.length);
    }
    if (/close/i.test(answer.head.headers.get('connection') ?? '')) upstream.destroy();
    this.deliver(answer, body);
  }

  private upstreamClosed(key: string, upstream: Socket): void {
    if (this.upstreams.get(key) === upstream) this.upstreams.delete(key);
    const answer = this.straightAnswer;
    if (!answer || answer.upstream !== upstream || this.client.destroyed) return;
    if (answer.head && answer.length === 'close') return this.deliver(answer, answer.bytes);
    if (answer.head || answer.bytes.length) return void this.client.destroy(); // half an answer: nothing honest to send
    // no answer at all (the driver or node is gone, or it closed a kept-alive connection): node:http takes
    // the request and answers as the grid does for a session it cannot reach
    this.straightAnswer = undefined;
    this.pending = this.pending.length ? Buffer.concat([answer.request, this.pending]) : answer.request;
    this.insideNext = true;
    this.busy = false;
    this.next();
  }

  private deliver(answer: StraightAnswer, body: Buffer): void {
    this.straightAnswer = undefined;
    const head = answer.head!;
    const type = head.headers.get('content-type') ?? 'application/json; charset=utf-8';
    this.client.cork();
    this.client.write(`HTTP/1.1 ${head.status} ${head.reason}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\ncache-control: no-cache\r\n${answer.close ? 'connection: close\r\n' : ''}\r\n`, 'latin1');
    this.client.write(body);
    this.client.uncork();
    answer.straight.answered(head.status, body, answer.bytesIn);
    this.busy = false;
    if (answer.close) return void this.client.end();
    this.next();
  }

  // ---- node:http, in memory ----

  private insideSocket(): MemorySocket {
    if (this.inside) return this.inside;
    const [mine, theirs] = memorySocketPair();
    theirs.remoteAddress = this.client.remoteAddress;
    theirs.remotePort = this.client.remotePort;
    mine.on('data', this.onInside);
    mine.on('end', () => this.client.end());
    mine.on('close', () => this.client.destroySoon());
    this.http.emit('connection', theirs);
    this.inside = mine;
    return mine;
  }

  private sendInside(head: RequestHead, request: Buffer, stillToCome: number): void {
    const inside = this.insideSocket();
    this.insideAnswer = { method: head.method, close: head.close, head: EMPTY };
    this.toInside = stillToCome;
    inside.write(request);
    if (stillToCome > 0 && this.clientEnded) inside.end();
  }

  /** Relays node:http's answer as it comes, reading just enough to know where it ends. */
  private fromInside(chunk: Buffer): void {
    const answer = this.insideAnswer;
    if (!answer) {
      // node:http wrote outside a request (an error of its own): it speaks for the connection from here on
      this.client.write(chunk);
      return this.handOver();
    }
    if (answer.left === undefined) {
      const bytes = answer.head.length ? Buffer.concat([answer.head, chunk]) : chunk;
      const end = bytes.indexOf(HEAD_END);
      if (end === -1) return void (answer.head = bytes);
      const head = parseAnswerHead(bytes.toString('latin1', 0, end));
      const length = head ? answerLength(head, answer.method) : 'close';
      if (typeof length !== 'number') {
        // a chunked or close-delimited answer: pass everything on as it is, for good
        this.insideAnswer = undefined;
        this.client.write(bytes);
        return this.handOver();
      }
      this.client.write(bytes.subarray(0, end + 4));
      answer.left = length;
      chunk = bytes.subarray(end + 4);
    }
    const part = chunk.subarray(0, answer.left);
    answer.left -= part.length;
    if (part.length) this.client.write(part);
    if (answer.left > 0) return;
    this.insideAnswer = undefined;
    this.busy = false;
    if (answer.close) return void this.client.end();
    this.next();
  }

  /** From here on node:http has the connection: bytes flow both ways unread. */
  private handOver(): void {
    if (this.handedOver) return;
    this.handedOver = true;
    this.headArrived();
    const inside = this.insideSocket();
    this.client.off('data', this.onData);
    inside.off('data', this.onInside);
    if (this.pending.length) inside.write(this.pending);
    this.pending = EMPTY;
    if (this.clientEnded) inside.end();
    else this.client.pipe(inside);
    inside.pipe(this.client);
    this.client.resume();
  }
}
