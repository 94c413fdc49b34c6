// A worker's ports serve only those who read its record in Redis (the grid's
// proxies, and playwright-distributed's): each endpoint carries a secret path,
// as Playwright's browser servers do with their random path. The CDP port
// answers 403 to any other path, before it starts a browser. Endpoints are
// logged and shown on /status without their path, so the secret stays in Redis.
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh secret path ('/' and 32 hex digits: 128 random bits, as Playwright's own). */
export function secretPath(): string {
  return `/${randomBytes(16).toString('hex')}`;
}

/** Does an HTTP request head ask for exactly `path` (the request target, query string ignored)? */
export function asksForPath(head: Buffer, path: string): boolean {
  const target = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r\n/.exec(head.toString('latin1', 0, Math.min(head.length, 512)))?.[1];
  const asked = Buffer.from(target?.split('?')[0] ?? '');
  const wanted = Buffer.from(path);
  return asked.length === wanted.length && timingSafeEqual(asked, wanted);
}

/** An endpoint as logs and /status show it: scheme, host and port; the path (the secret) left out. */
export function withoutSecret(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}/${url.pathname.length > 1 ? '…' : ''}`;
  } catch {
    return '';
  }
}
