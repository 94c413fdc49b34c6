// Turns what a client library rejects with into the errors the Backend
// interface promises: Redis error replies → ReplyError, a connection that is
// gone → ConnectionError (naming the masked URL); anything else is a bug in
// the call (a bad argument) and passes through unchanged.
import { ConnectionError, ReplyError } from '../../core/backend.ts';
import { errorText } from './error-text.ts';

export interface ErrorKinds {
  /** Is this the library's class for a Redis error reply? */
  isReply(error: unknown): error is Error;
  /** Is this one of the library's "connection closed / lost / timed out" errors? */
  isConnection(error: unknown): boolean;
}

export function backendError(error: unknown, kinds: ErrorKinds, display: string, secret?: string): Error {
  if (error instanceof ReplyError || error instanceof ConnectionError) return error;
  if (kinds.isReply(error)) return new ReplyError(errorText(error, secret));
  if (kinds.isConnection(error) || isSystemError(error)) {
    return new ConnectionError(`Redis at ${display}: ${errorText(error, secret)}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** An OS-level socket error (ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ENOTFOUND…). */
function isSystemError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
}
