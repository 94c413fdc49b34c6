// Calls in flight on a client, so close() can end every one of them. ioredis
// keeps the commands queued between reconnect attempts even after
// disconnect(), and never settles them: without this a call made during an
// outage would wait forever once the backend is closed.

export class PendingCalls {
  readonly #rejecters = new Set<(error: Error) => void>();
  #closed: Error | undefined;

  /** `promise`, or a rejection with the close error if close() comes first. */
  run<T>(promise: Promise<T>): Promise<T> {
    if (this.#closed) {
      promise.catch(() => undefined);
      return Promise.reject(this.#closed);
    }
    return new Promise<T>((resolve, reject) => {
      this.#rejecters.add(reject);
      promise.then(resolve, reject).finally(() => this.#rejecters.delete(reject));
    });
  }

  /** Rejects every call in flight, and every later one, with `error`. */
  rejectAll(error: Error): void {
    this.#closed = error;
    for (const reject of this.#rejecters) reject(error);
    this.#rejecters.clear();
  }
}
