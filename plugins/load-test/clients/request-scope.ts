// The requests a user has in flight under one abort signal (the user's hard
// stop, or a step's timeout joined to it). One listener on the signal aborts
// them all: a listener added and removed per request was a tenth of a
// request's CPU on a fast server. The requests are a linked list through
// their own fields: adding and removing one allocates nothing.
export abstract class ScopedRequest {
  /** Neighbours in the scope's list of requests in flight. */
  scopePrev: ScopedRequest | undefined = undefined;
  scopeNext: ScopedRequest | undefined = undefined;
  abstract cancel(reason: unknown): void;
}

export class RequestScope {
  /** The signal has aborted (read per request: cheaper than signal.aborted). */
  aborted: boolean;
  private head: ScopedRequest | undefined;
  private closed = false;
  private readonly onAbort = () => {
    this.aborted = true;
    const requests: ScopedRequest[] = [];
    for (let r = this.head; r; r = r.scopeNext) requests.push(r);
    for (const request of requests) request.cancel(this.signal.reason);
  };

  constructor(readonly signal: AbortSignal) {
    this.aborted = signal.aborted;
    if (!this.aborted) signal.addEventListener('abort', this.onAbort, { once: true });
  }

  add(request: ScopedRequest): void {
    request.scopeNext = this.head;
    if (this.head) this.head.scopePrev = request;
    this.head = request;
  }

  delete(request: ScopedRequest): void {
    const { scopePrev: prev, scopeNext: next } = request;
    if (prev) prev.scopeNext = next;
    else if (this.head === request) this.head = next;
    else return; // not in the list
    if (next) next.scopePrev = prev;
    request.scopePrev = request.scopeNext = undefined;
    if (this.closed && !this.head) this.unlisten();
  }

  /** The step is over: stop listening once its last request (one it did not wait for) is done. */
  close(): void {
    this.closed = true;
    if (!this.head) this.unlisten();
  }

  private unlisten(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}
