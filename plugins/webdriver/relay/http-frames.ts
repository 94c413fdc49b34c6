// The little of HTTP/1.1 framing the command relay reads itself: a
// request's or an answer's head, and where its body ends. Anything these do
// not recognise is left to node:http (the relay hands the connection over).
import { WebDriverError } from '../errors.ts';

export const HEAD_END = Buffer.from('\r\n\r\n');

export interface RequestHead {
  method: string;
  /** The request target as sent: path and query. */
  target: string;
  /** Header values by lower-case name (the first of repeated ones). */
  headers: Map<string, string>;
  /** Body bytes announced by Content-Length (0 without one). */
  length: number;
  /** The client asked to close the connection after this answer. */
  close: boolean;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A request head the relay can route: HTTP/1.1, a known body length, no
 * chunked body, no upgrade, no Expect. Anything else (or malformed) is
 * undefined, and node:http deals with it.
 */
export function parseRequestHead(text: string): RequestHead | undefined {
  const lines = text.split('\r\n');
  const [method, target, version, extra] = lines[0]!.split(' ');
  if (extra !== undefined || version !== 'HTTP/1.1' || !method || !TOKEN.test(method) || !target?.startsWith('/')) return undefined;
  const headers = readHeaders(lines);
  if (!headers || headers.has('transfer-encoding') || headers.has('upgrade') || headers.has('expect')) return undefined;
  const announced = headers.get('content-length');
  const length = announced === undefined ? 0 : /^\d{1,15}$/.test(announced) ? Number(announced) : NaN;
  if (Number.isNaN(length)) return undefined;
  return { method, target, headers, length, close: /(^|,)\s*close\s*(,|$)/i.test(headers.get('connection') ?? '') };
}

export interface AnswerHead {
  status: number;
  reason: string;
  headers: Map<string, string>;
}

export function parseAnswerHead(text: string): AnswerHead | undefined {
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0]!);
  const headers = readHeaders(lines);
  if (!status || !headers) return undefined;
  return { status: Number(status[1]), reason: status[2] ?? '', headers };
}

/** Where an answer's body ends: a byte count, 'chunked', or 'close' (until the connection ends). */
export function answerLength(head: AnswerHead, requestMethod: string): number | 'chunked' | 'close' {
  if (requestMethod === 'HEAD' || head.status === 204 || head.status === 304 || head.status < 200) return 0;
  if (/chunked/i.test(head.headers.get('transfer-encoding') ?? '')) return 'chunked';
  const length = head.headers.get('content-length');
  return length !== undefined && /^\d{1,15}$/.test(length) ? Number(length) : 'close';
}

/** A whole chunked body at the start of `bytes`, or undefined while incomplete. */
export function readChunked(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(bytes.toString('latin1', at, lineEnd).split(';')[0]!, 16);
    if (Number.isNaN(size)) throw new WebDriverError('malformed chunk size', { code: 'COORD_ERR_WEBDRIVER_MALFORMED_ANSWER' });
    at = lineEnd + 2;
    if (size === 0) {
      // trailers, then an empty line
      return bytes.indexOf('\r\n\r\n', at - 2) === -1 ? undefined : Buffer.concat(parts);
    }
    if (bytes.length < at + size + 2) return undefined;
    parts.push(bytes.subarray(at, at + size));
    at += size + 2;
  }
}

function readHeaders(lines: string[]): Map<string, string> | undefined {
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).toLowerCase();
    // two lengths could frame the body two ways: node:http decides what such a request means
    if (name === 'content-length' && headers.has(name)) return undefined;
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}
