// Who may use the grid when it is closed: when `proxy.token` is set, or API
// keys exist (coord webdriver apikey, access.ts). A request carries the token
// or a key as `Authorization: Bearer TOKEN`, as the password of Basic auth
// (Selenium's http://user:TOKEN@host), or as `?token=TOKEN` (WebSockets,
// whose clients often cannot set headers). Each session has a secret of its
// own, derived from the grid's secret (the token; without one, a random
// secret kept in Redis) and the session id: it opens that session's
// WebSockets (?token= of its webSocketUrl and se:cdp) and — in the id a
// session created with Basic auth is handed, ID.SECRET — its commands, and
// nothing else. Only the session's creator is ever told it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a request's credentials are: none at all, the grid token or a live API key, or something else (refused). */
export type Credentials = 'none' | 'token' | 'wrong';

/** What a role checks requests against (access.ts keeps it up to date). */
export interface Gate {
  /** Whether requests need credentials: a token is set, or API keys are (or were) in use. */
  readonly closed: boolean;
  /** What sessions' own secrets are derived from: the token, else the grid secret in Redis; undefined while unknown (no session is handed a secret). */
  readonly secret: string | undefined;
  /** Is `sent` the token or a live API key? */
  accepts(sent: string): boolean;
}

/** Equal strings, compared in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request sent: Bearer, Basic password, or ?token= of the target; '' when it sent none. */
export function sentToken(authorization: string | undefined, target?: string): string {
  if (authorization) {
    const bearer = /^Bearer\s+(.+)$/i.exec(authorization)?.[1];
    if (bearer !== undefined) return bearer.trim();
    const basic = /^Basic\s+(.+)$/i.exec(authorization)?.[1];
    if (basic !== undefined) {
      const decoded = Buffer.from(basic.trim(), 'base64').toString();
      return decoded.slice(decoded.indexOf(':') + 1);
    }
    return authorization; // some other scheme: a token it is not
  }
  const query = target?.indexOf('?') ?? -1;
  if (query === -1) return '';
  return new URLSearchParams(target!.slice(query + 1)).get('token') ?? '';
}

/** Checks a request against the gate (an open grid lets everything pass). */
export function credentials(gate: Gate, authorization: string | undefined, target?: string): Credentials {
  if (!gate.closed) return 'token';
  const sent = sentToken(authorization, target);
  if (!sent) return 'none';
  return gate.accepts(sent) ? 'token' : 'wrong';
}

/** The token that opens one session's WebSocket: HMAC(grid secret, session id), so any proxy can check it without Redis. */
export function sessionToken(secret: string, sessionId: string): string {
  return createHmac('sha256', secret).update(`webdriver session ${sessionId}`).digest('base64url');
}

/** Between a session's id and its secret in the id a Basic-auth client is handed. */
const HANDLE_SEPARATOR = '.';

/**
 * The session id a client that created its session with Basic auth is
 * handed: ID.SECRET. WebdriverIO's user/key send credentials on POST /session
 * only; the secret in the id it puts in every command's path stands for them.
 */
export function sessionHandle(secret: string, sessionId: string): string {
  return `${sessionId}${HANDLE_SEPARATOR}${sessionToken(secret, sessionId)}`;
}

/** A path's session segment: the grid's session id, and whether it carried that session's secret (ID.SECRET). */
export interface SessionRef {
  sessionId: string;
  secret: 'none' | 'right' | 'wrong';
}

/** Reads ID or ID.SECRET (no grid secret known: a secret is never right). */
export function readSessionRef(secret: string | undefined, segment: string): SessionRef {
  const at = segment.indexOf(HANDLE_SEPARATOR);
  if (at === -1) return { sessionId: segment, secret: 'none' };
  const sessionId = segment.slice(0, at);
  const right = !!secret && sameSecret(segment.slice(at + 1), sessionToken(secret, sessionId));
  return { sessionId, secret: right ? 'right' : 'wrong' };
}

/** May a session's command pass? With the grid token or a live key, or without credentials through its own secret; wrong credentials never. */
export function sessionAllowed(gate: Gate, sent: string, ref: SessionRef): boolean {
  if (!gate.closed) return true;
  if (ref.secret === 'wrong') return false;
  if (sent) return gate.accepts(sent);
  return ref.secret === 'right';
}

/** A random secret (a node's key), URL-safe. */
export function randomSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** The header by which the proxy and the manager prove to a node that they are the grid (the node's key from session:{id}:upstream). */
export const NODE_KEY_HEADER = 'x-coord-node-key';

/** One W3C 401 for every refusal: it says what to send and nothing about what exists. */
export const UNAUTHORIZED_MESSAGE = 'missing or wrong token: send Authorization: Bearer TOKEN (the grid token or an API key), use http://user:TOKEN@host:port, or add ?token=TOKEN to a WebSocket URL';
