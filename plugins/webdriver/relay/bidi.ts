// The node's BiDi relay: client ↔ chromedriver, frames passed on unchanged,
// but read just enough (RFC 6455 frame headers) to know whether the client
// is still there. The node pings the client between the driver's frames;
// every byte the client sends — a message or the pong to a ping — is
// activity. A client that died closes its socket; one that is frozen (its
// process stopped) answers nothing, so its session goes idle like any other
// and gives its slot back after the idle timeout. The pongs are the node's
// business and do not reach chromedriver.
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { endTogether, upgradeHead } from './websocket.ts';

const OPCODE_PONG = 0xa;
/** A ping frame from a server: FIN + opcode 9, unmasked, no payload. */
const PING = Buffer.from([0x89, 0x00]);
const HEAD_END = Buffer.from('\r\n\r\n');
const EMPTY: Buffer = Buffer.alloc(0);

/** Follows the frames of one direction of a WebSocket: where each starts and ends, and whether it is to be dropped. */
export class FrameCursor {
  private partial: Buffer = EMPTY;
  /** Payload bytes of the current frame still to come. */
  private left = 0;
  private dropping = false;

  constructor(private readonly drop: (opcode: number) => boolean = () => false) {}

  /** Between two frames: a frame of our own may go in here. */
  get atBoundary(): boolean {
    return this.left === 0 && this.partial.length === 0;
  }

  /** The parts of `chunk` to pass on (all of it, less dropped frames). */
  feed(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    const bytes = this.partial.length ? Buffer.concat([this.partial, chunk]) : chunk;
    this.partial = EMPTY;
    let from = 0; // start of the bytes passed on as one piece
    let at = 0;
    const flush = (to: number) => {
      if (to > from) out.push(bytes.subarray(from, to));
    };
    while (at < bytes.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, bytes.length - at);
        this.left -= n;
        at += n;
        if (this.dropping) from = at;
        continue;
      }
      const length = frameHeadLength(bytes, at);
      if (length === undefined || bytes.length < at + length.head) {
        flush(at);
        this.partial = bytes.subarray(at);
        return out;
      }
      const opcode = bytes[at]! & 0x0f;
      this.dropping = this.drop(opcode);
      if (this.dropping) {
        flush(at);
        from = at + length.head;
      }
      at += length.head;
      this.left = length.payload;
      if (this.dropping && this.left === 0) from = at;
    }
    flush(at);
    return out;
  }
}

/** Header size and payload size of the frame at `at`, or undefined while its first bytes are missing. */
function frameHeadLength(bytes: Buffer, at: number): { head: number; payload: number } | undefined {
  if (bytes.length < at + 2) return undefined;
  const masked = (bytes[at + 1]! & 0x80) !== 0;
  const short = bytes[at + 1]! & 0x7f;
  const extra = short === 126 ? 2 : short === 127 ? 8 : 0;
  const head = 2 + extra + (masked ? 4 : 0);
  if (bytes.length < at + 2 + extra) return undefined;
  const payload = short === 126 ? bytes.readUInt16BE(at + 2) : short === 127 ? Number(bytes.readBigUInt64BE(at + 2)) : short;
  return { head, payload };
}

export interface BidiRelayOptions {
  host: string;
  port: number;
  path: string;
  /** How often the client is pinged. */
  pingMs: number;
  /** The client sent something (a message or a pong). */
  activity(): void;
}

/** Relays one BiDi WebSocket to the driver; resolves once either side has closed. */
export function relayBidi(req: IncomingMessage, client: Socket, head: Buffer, options: BidiRelayOptions): Promise<void> {
  return new Promise((resolve) => {
    const upstream = connect(options.port, options.host);
    const fromClient = new FrameCursor((opcode) => opcode === OPCODE_PONG);
    const fromDriver = new FrameCursor();
    let answerHead: Buffer | undefined = EMPTY; // the driver's 101, until it has passed
    let pingDue = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(pinger);
      client.destroy();
      upstream.destroy();
      resolve();
    };
    const pinger = setInterval(() => {
      if (answerHead !== undefined) return;
      if (fromDriver.atBoundary) client.write(PING);
      else pingDue = true;
    }, options.pingMs);

    const toDriver = (chunk: Buffer) => {
      options.activity();
      for (const part of fromClient.feed(chunk)) upstream.write(part);
    };
    upstream.once('connect', () => {
      upstream.write(upgradeHead(req, options));
      if (head.length) toDriver(head);
      client.on('data', toDriver);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (answerHead !== undefined) {
        const bytes = answerHead.length ? Buffer.concat([answerHead, chunk]) : chunk;
        const end = bytes.indexOf(HEAD_END);
        if (end === -1) return void (answerHead = bytes);
        answerHead = undefined;
        client.write(bytes.subarray(0, end + 4));
        chunk = bytes.subarray(end + 4);
      }
      for (const part of fromDriver.feed(chunk)) client.write(part);
      if (pingDue && fromDriver.atBoundary) {
        pingDue = false;
        client.write(PING);
      }
    });
    endTogether(client, upstream, finish);
  });
}
