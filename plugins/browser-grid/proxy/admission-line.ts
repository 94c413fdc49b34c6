// The line a client waits in before its first admission call: a churn of
// connect-then-close clients is turned away here, before any Redis round trip.
// A real WebSocket client stays connected and silent until its 101; a churned
// one has sent its request and hung up, and its hang-up is usually read within
// a turn of the event loop after its request. So a client is admitted only
// after that turn, and only AT_ONCE clients await their first admission answer
// at a time: in a burst, the others wait here (no Redis call, no buffer), and
// by their turn the hang-ups of the churned ones have been read and they leave
// for free. Without this, each churned client cost a selection and a release
// in Redis (and a capacity message to every proxy; ~4,000 script calls for
// 2,000 of them, and the queue filled with them), and a real client's
// selection waited behind them. A loaded sender's hang-up may trail its
// request by more: a few percent of a burst are still admitted, then rolled back.
import type { Socket } from 'node:net';

/** Clients awaiting their first admission answer at once; the rest wait in line, in order. */
export const AT_ONCE = 32;

/** One turn of the event loop past its poll phase: a hang-up already on its way has been read by then. */
const nextPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

export class AdmissionLine {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  /** Clients waiting in line now. */
  get length(): number {
    return this.waiting.length;
  }

  /**
   * Waits for the client's turn. Resolves with the function that ends it (call once
   * the first admission answer came, or the client is done; more calls do nothing),
   * or undefined when the client hung up first: it is owed no answer and costs no Redis call.
   */
  async enter(socket: Socket, gone: AbortSignal): Promise<(() => void) | undefined> {
    const queued = this.inFlight >= AT_ONCE;
    if (queued) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    // the turn is ours from here: handed on to the next in line when ended
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const next = this.waiting.shift();
      if (next) next(); // the turn passes on, inFlight unchanged
      else this.inFlight--;
    };
    // one that waited in line has had its turns of the loop already
    if (!queued) await nextPoll();
    if (gone.aborted || socket.destroyed || socket.readableEnded) {
      end();
      return undefined;
    }
    return end;
  }
}
