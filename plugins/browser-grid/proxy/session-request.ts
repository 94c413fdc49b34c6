// The body of POST /v1/sessions, read and checked: playwright-distributed's
// fields (browser, playwright_version, mode, connect_metadata), each wrong one
// named with what was expected, for a 400 problem.
import type { IncomingMessage } from 'node:http';
import { browserTypes } from '../refs.ts';
import type { SessionRequest } from './session-records.ts';

/** Largest body read: connect_metadata is labels, not data. */
const MAX_BODY_BYTES = 16 * 1024;
const FIELDS = ['browser', 'playwright_version', 'mode', 'connect_metadata'];

/** The request, or the one line saying what is wrong with it. */
export async function readSessionRequest(req: IncomingMessage, defaultBrowser: string): Promise<SessionRequest | { problem: string }> {
  const text = await readBody(req);
  if (text === undefined) return { problem: `the body is larger than ${MAX_BODY_BYTES / 1024} KiB` };
  let body: unknown = {};
  if (text.trim()) {
    try {
      body = JSON.parse(text);
    } catch (error) {
      return { problem: `the body is not JSON (${(error as Error).message}); expected e.g. {"browser":"chromium"}` };
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { problem: 'the body must be a JSON object, e.g. {"browser":"chromium"}' };
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => !FIELDS.includes(k));
  if (unknown) return { problem: `unknown field "${unknown}"; expected ${FIELDS.join(', ')}` };
  const browser = b.browser ?? defaultBrowser;
  if (typeof browser !== 'string' || !(browserTypes as readonly string[]).includes(browser)) {
    return { problem: `browser ${JSON.stringify(browser)}: expected one of ${browserTypes.join(', ')}` };
  }
  const version = b.playwright_version ?? '';
  const m = typeof version === 'string' ? /^(?:v?(\d+)\.(\d+)(?:\.\d+)?)?$/.exec(version) : null;
  if (!m) return { problem: `playwright_version ${JSON.stringify(version)}: expected a version such as "1.62" or "1.62.1", or none for any` };
  const mode = b.mode ?? 'default';
  if (mode === 'dedicated') {
    return { problem: 'mode "dedicated" (a worker to itself) is not served: a worker\'s sessions share its browser (up to maxConcurrentSessions), each in browser contexts of its own; use mode "default"' };
  }
  if (mode !== 'default') return { problem: `mode ${JSON.stringify(mode)}: expected "default"` };
  const metadata = b.connect_metadata ?? {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return { problem: 'connect_metadata must be a JSON object' };
  return { browser, playwrightVersion: m[1] ? `${m[1]}.${m[2]}` : '', connectMetadata: metadata as Record<string, unknown> };
}

/** The body as text, or undefined once it outgrew MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
