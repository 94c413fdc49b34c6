// Two connected in-memory sockets: what one writes the other reads. The
// command relay hands a node:http server one end as a connection (the
// server accepts any Duplex) and talks HTTP into the other, so requests it
// does not route itself still reach the server without another socket.
// (node:stream gained duplexPair in Node 22; Node 20 has none.)
import { Duplex } from 'node:stream';

class MemorySocket extends Duplex {
  peer!: MemorySocket;
  /** A write the peer could not take yet: finished when the peer reads again. */
  private waiting?: () => void;
  /** Read by node:http for logs and X-Forwarded-For: the real client's, set by the owner. */
  remoteAddress?: string;
  remotePort?: number;

  override _read(): void {
    const resume = this.peer.waiting;
    this.peer.waiting = undefined;
    resume?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.peer.push(chunk)) done();
    else this.waiting = () => done();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.peer.push(null);
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.waiting?.();
    if (!this.peer.destroyed) this.peer.destroy();
    done(error);
  }

  // node:http calls these on real sockets when they exist
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
}

export type { MemorySocket };

/** Two sockets joined to each other. */
export function memorySocketPair(): [MemorySocket, MemorySocket] {
  const a = new MemorySocket();
  const b = new MemorySocket();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
