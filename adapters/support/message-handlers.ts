// The onMessage handlers of one subscriber. A handler that throws is reported
// and skipped: it must not keep the message from the others, nor throw into
// the client library's socket code.
import type { PubSubMessage } from '../../core/backend.ts';
import { errorText } from './error-text.ts';

type Handler = (message: PubSubMessage) => void;

export class MessageHandlers {
  readonly #handlers = new Set<Handler>();
  readonly #report: (text: string) => void;

  constructor(report: (text: string) => void) {
    this.#report = report;
  }

  add(handler: Handler): () => void {
    // Wrapped so the same function registered twice gets two registrations, each removable.
    const entry: Handler = (message) => handler(message);
    this.#handlers.add(entry);
    return () => void this.#handlers.delete(entry);
  }

  deliver(message: PubSubMessage): void {
    for (const handler of [...this.#handlers]) {
      try {
        handler(message);
      } catch (error) {
        this.#report(`a pub/sub message handler threw on channel ${message.channel}: ${errorText(error)}`);
      }
    }
  }
}
