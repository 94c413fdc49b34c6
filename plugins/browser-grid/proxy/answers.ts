// How the proxy turns a client away: an HTTP error with a JSON body
// ({ error: { code, message } }), on an upgrade's raw socket or as a response;
// on playwright-distributed's /v1 API, an RFC 9457 problem as its server sends.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ApiKeys } from '../../../entries/plugin.ts';

export function errorBody(code: number, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: { code, message, ...extra } });
}

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 410: 'Gone', 422: 'Unprocessable Content', 426: 'Upgrade Required', 428: 'Precondition Required', 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

/** The media type of playwright-distributed's /v1 errors (RFC 9457 problem details). */
export const PROBLEM_TYPE = 'application/problem+json';

/** An RFC 9457 problem: the status's reason as its title, what went wrong as its detail. */
export function problemBody(status: number, detail: string, instance?: string): string {
  return JSON.stringify({ type: 'about:blank', title: REASONS[status] ?? 'Error', status, detail, ...(instance ? { instance } : {}) });
}

/** Answers an upgrade request with an HTTP error and closes the socket. */
export function rejectUpgrade(socket: Socket, code: number, message: string, retryAfter?: number, extra?: Record<string, unknown>, headers: string[] = []): void {
  const body = errorBody(code, message, extra);
  const head = [
    `HTTP/1.1 ${code} ${REASONS[code] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...(retryAfter ? [`Retry-After: ${retryAfter}`] : []),
    ...headers,
  ];
  if (!socket.destroyed) socket.end(head.join('\r\n') + '\r\n\r\n' + body);
}

/**
 * Does the request carry the grid's token or one of its API keys
 * (Authorization: Bearer …, or ?token=…)? Always, when the grid has neither.
 */
export function tokenAccepted(token: string | undefined, req: IncomingMessage, url: URL, apiKeys?: Pick<ApiKeys, 'size' | 'has'>): boolean {
  if (!token && !apiKeys?.size) return true;
  const sent = [/^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1], url.searchParams.get('token')].filter((s): s is string => !!s);
  return sent.some((s) => (!!token && s === token) || (!!apiKeys && apiKeys.has(s)));
}
