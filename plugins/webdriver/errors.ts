// The webdriver grid's errors. Each is a CoordError with a stable code
// (docs/errors.md, section webdriver). A client of the grid never sees them
// thrown: it gets W3C's JSON error shape (errorBody) with the W3C error name
// and HTTP status each carries.
import { CoordError, type CoordErrorCode, type CoordErrorOptions } from '../../entries/plugin.ts';
import type { Code } from './session/log-codes.ts';

/** The W3C error names coord answers with, and their HTTP status. */
export const errorStatus = {
  'invalid argument': 400,
  'invalid session id': 404,
  'unknown command': 404,
  'unknown method': 405,
  'session not created': 500,
  'unknown error': 500,
  unauthorized: 401,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** Each W3C error name's code; another name a driver answered with (passed on as it came) has the kind's, COORD_ERR_WEBDRIVER_W3C. */
const w3cCodes: Record<ErrorCode, CoordErrorCode> = {
  'invalid argument': 'COORD_ERR_WEBDRIVER_INVALID_ARGUMENT',
  'invalid session id': 'COORD_ERR_WEBDRIVER_INVALID_SESSION_ID',
  'unknown command': 'COORD_ERR_WEBDRIVER_UNKNOWN_COMMAND',
  'unknown method': 'COORD_ERR_WEBDRIVER_UNKNOWN_METHOD',
  'session not created': 'COORD_ERR_WEBDRIVER_SESSION_NOT_CREATED',
  'unknown error': 'COORD_ERR_WEBDRIVER_UNKNOWN_ERROR',
  unauthorized: 'COORD_ERR_WEBDRIVER_UNAUTHORIZED',
};

/** W3C's error body: `{value:{error,message,stacktrace}}`. */
export function errorBody(error: ErrorCode, message: string): string {
  return JSON.stringify({ value: { error, message, stacktrace: '' } });
}

/** An error a client gets as `{value:{error,message,stacktrace}}`, with its HTTP status. */
export class W3CError extends CoordError {
  override readonly name = 'W3CError';
  constructor(
    /** One of coord's W3C error names, or another a driver answered with (passed on as it came). */
    readonly error: ErrorCode,
    message: string,
    /** An HTTP status other than the name's own (413 for a body over the limit, 408 for one that stalls). */
    private readonly httpStatus?: number,
    options?: CoordErrorOptions,
  ) {
    super(message, w3cCodes[error] ?? 'COORD_ERR_WEBDRIVER_W3C', options);
  }
  get status(): number {
    return this.httpStatus ?? errorStatus[this.error] ?? 500;
  }
}

/** chromedriver did not start: it timed out (`kind` timeout) or failed (exited, bad binary). */
export class DriverError extends CoordError {
  override readonly name = 'DriverError';
  constructor(
    readonly kind: 'timeout' | 'failure',
    message: string,
    options?: CoordErrorOptions,
  ) {
    super(message, kind === 'timeout' ? 'COORD_ERR_WEBDRIVER_DRIVER_TIMEOUT' : 'COORD_ERR_WEBDRIVER_DRIVER', options);
  }
}

/** The code of a refused new session, by the session log's code for it. */
const refusalCodes: Partial<Record<Code, CoordErrorCode>> = {
  QTIMEOUT: 'COORD_ERR_WEBDRIVER_QUEUE_TIMEOUT',
  QUNAVAILABLE: 'COORD_ERR_WEBDRIVER_NO_MATCH',
  OTIMEOUT: 'COORD_ERR_WEBDRIVER_SCHEDULING_TIMEOUT',
  NTIMEOUT: 'COORD_ERR_WEBDRIVER_NODE_TIMEOUT',
  CLEFT: 'COORD_ERR_WEBDRIVER_CLIENT_LEFT',
  INVALIDCAP: 'COORD_ERR_WEBDRIVER_BAD_CAPABILITY',
};

/** A session creation the manager refused: the session log's code for it, and the W3C error the client gets. */
export class SessionRefusal extends CoordError {
  override readonly name = 'SessionRefusal';
  constructor(
    readonly logCode: Code,
    readonly w3c: W3CError,
    options: CoordErrorOptions = {},
  ) {
    super(w3c.message, refusalCodes[logCode] ?? 'COORD_ERR_WEBDRIVER_REFUSED', { cause: w3c, ...options });
  }
}

/** Any other failure of the grid's own (a node that cannot start, a recording, DevTools, a listener): `code` names it. */
export class WebDriverError extends CoordError {
  override readonly name = 'WebDriverError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_WEBDRIVER', options);
  }
}
