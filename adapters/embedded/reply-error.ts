// Turns whatever a command emulator threw into the ReplyError Redis would have sent.
import { ReplyError } from '../../core/backend.ts';

export const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/** Keeps a message that starts with an error code (ERR, WRONGTYPE, NOSCRIPT…); otherwise prefixes ERR. */
export function toReplyError(error: unknown): ReplyError {
  if (error instanceof ReplyError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ReplyError(/^[A-Z][A-Z_]+ /.test(message) ? message : `ERR ${message}`);
}

export function wrongType(): ReplyError {
  return new ReplyError(WRONGTYPE);
}

export function syntaxError(): ReplyError {
  return new ReplyError('ERR syntax error');
}

export function notInteger(): ReplyError {
  return new ReplyError('ERR value is not an integer or out of range');
}

export function wrongArity(command: string): ReplyError {
  return new ReplyError(`ERR wrong number of arguments for '${command.toLowerCase()}' command`);
}

/** Parses a whole decimal integer argument or throws the error Redis gives. */
export function integerArg(text: string | undefined): number {
  if (text === undefined || !/^-?\d+$/.test(text)) throw notInteger();
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw notInteger();
  return n;
}
