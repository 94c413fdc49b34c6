// The state of a backend's shared connection, reported once per change: one
// log line and one onState call each time it moves, never for a repeat (a
// retry loop that fails fifty times is still one 'reconnecting').
import type { BackendState } from '../../core/backend.ts';
import { errorText } from './error-text.ts';
import { tlsHint } from './tls.ts';

type Listener = (state: BackendState, detail?: string) => void;

export class ConnectionState {
  #state: BackendState | undefined;
  #lastError: string | undefined;
  readonly #listeners = new Set<Listener>();
  readonly #label: string;
  readonly #log: ((line: string) => void) | undefined;
  readonly #secret: string | undefined;

  /** `label` names the adapter and the masked URL; `secret` is masked out of error texts. */
  constructor(label: string, log: ((line: string) => void) | undefined, secret: string | undefined) {
    this.#label = label;
    this.#log = log;
    this.#secret = secret;
  }

  get current(): BackendState | undefined {
    return this.#state;
  }

  /** The latest connection error since the last 'ready', as one masked line. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  noteError(error: unknown): void {
    const hint = tlsHint(error);
    this.#lastError = errorText(error, this.#secret) + (hint ? ` (${hint})` : '');
  }

  /** Moves to `state`. Repeats, and anything after 'closed', are ignored. */
  set(state: BackendState, detail?: string): void {
    if (state === this.#state || this.#state === 'closed') return;
    this.#state = state;
    if (state === 'ready') this.#lastError = undefined;
    this.#log?.(`${this.#label}: ${state}${detail ? ` (${detail})` : ''}`);
    for (const listener of [...this.#listeners]) {
      try {
        listener(state, detail);
      } catch {
        // A listener's bug must not stop the others from hearing the change.
      }
    }
  }

  /** The connection went away after it had been ready: report that it is being re-established. */
  lost(): void {
    if (this.#state === 'ready') this.set('reconnecting', this.#lastError ?? 'connection lost');
  }

  on(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Writes a line that is not a state change (e.g. a pub/sub handler that threw). */
  note(text: string): void {
    this.#log?.(`${this.#label}: ${text}`);
  }
}
