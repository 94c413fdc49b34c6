// Notices a client that vanished without closing (its machine lost power, a
// network partition): the relay reads only the worker→client frame *headers*
// to know where frames end, and between two frames injects a WebSocket ping.
// A live client answers with a pong (any bytes will do); one that stays silent
// for a whole interval after a ping is gone, and its session is ended so no
// capacity stays counted. Payloads are never read or copied.

/** An unmasked ping with no payload: FIN + opcode 0x9, length 0. */
const PING = Buffer.from([0x89, 0x00]);

/** Tracks frame boundaries in a server→client WebSocket byte stream. */
export class FrameBoundaries {
  /** Payload bytes of the current frame still to come. */
  private remaining = 0;
  /** Bytes of an incomplete frame header. */
  private header: number[] = [];

  /** True when the bytes seen so far end exactly at a frame boundary. */
  get atBoundary(): boolean {
    return this.remaining === 0 && this.header.length === 0;
  }

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - at);
        this.remaining -= take;
        at += take;
        continue;
      }
      this.header.push(chunk[at++]!);
      const size = headerSize(this.header);
      if (size === undefined || this.header.length < size) continue;
      this.remaining = payloadLength(this.header);
      this.header = [];
    }
  }
}

/** The full header size once the first bytes are known (undefined while too few). */
function headerSize(h: number[]): number | undefined {
  if (h.length < 2) return undefined;
  const len7 = h[1]! & 0x7f;
  const masked = (h[1]! & 0x80) !== 0;
  return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (masked ? 4 : 0);
}

function payloadLength(h: number[]): number {
  const len7 = h[1]! & 0x7f;
  if (len7 < 126) return len7;
  if (len7 === 126) return (h[2]! << 8) | h[3]!;
  let n = 0;
  for (let i = 2; i < 10; i++) n = n * 256 + h[i]!;
  return n;
}

export interface KeepaliveTarget {
  /** Writes bytes to the client. */
  write(bytes: Buffer): void;
  /** Ends the session: the client is gone. */
  end(): void;
}

/**
 * Every `intervalMs`: if the client sent nothing since the last tick, a ping
 * goes out (between frames); if it still sent nothing by the next tick, the
 * session ends. Returns the hooks the relay calls and a stop function.
 */
export function keepalive(target: KeepaliveTarget, boundaries: FrameBoundaries, intervalMs: number) {
  let heard = true;
  let pinged = false;
  const timer = setInterval(() => {
    if (heard) {
      heard = false;
      pinged = false;
      return;
    }
    if (pinged) return target.end();
    if (boundaries.atBoundary) {
      target.write(PING);
      pinged = true;
    }
  }, intervalMs);
  timer.unref();
  return {
    /** The client sent something: it is there. */
    heardFromClient() {
      heard = true;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
