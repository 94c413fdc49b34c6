// Selenium Grid's own session commands, which a node answers itself instead
// of passing them to chromedriver (which knows none of them): se/file
// (upload), se/files (managed downloads) and se/event (Selenium's Session
// Event API, event.ts). Bad input is a W3C error, never a crash.
import { serveDownloads } from './downloads.ts';
import { readEvent, type SessionEvent } from './event.ts';
import { unpackUpload } from './upload.ts';
import type { SessionFolder } from '../node/session-folder.ts';
import { errorBody, W3CError } from '../errors.ts';

const SE_COMMAND = /^\/se\/(?:files?|event)(?:\?|$)/;

/** Is `rest` (the path after /session/{id}) one of Selenium Grid's commands the node answers? */
export function isSeCommand(rest: string): boolean {
  return SE_COMMAND.test(rest);
}

export interface SeAnswer {
  status: number;
  body: Buffer;
}

/** What a session's se/ commands reach: its folder, its downloads folder when it enabled them, and its log for events (resolves to when the event was kept). */
export interface SeSession {
  folder: SessionFolder;
  downloads: string | undefined;
  logEvent(event: SessionEvent): Promise<string>;
}

/** Answers se/file, se/files or se/event for a session. */
export async function serveSeCommand(method: string, rest: string, body: Buffer, session: SeSession): Promise<SeAnswer> {
  const { folder, downloads } = session;
  try {
    const path = rest.split('?')[0];
    if (path === '/se/event') {
      if (method !== 'POST') throw new W3CError('unknown method', `${method} se/event: use POST`);
      const event = readEvent(body);
      return ok({ success: true, eventType: event.eventType, timestamp: await session.logEvent(event) });
    }
    if (path === '/se/file') {
      if (method !== 'POST') throw new W3CError('unknown method', `${method} se/file: use POST`);
      return ok(unpackUpload(body, folder.sub('uploads')));
    }
    return ok(await serveDownloads(method, body, downloads));
  } catch (error) {
    const e = error instanceof W3CError ? error : new W3CError('unknown error', `${rest}: ${(error as Error).message}`);
    return { status: e.status, body: Buffer.from(errorBody(e.error, e.message)) };
  }
}

function ok(value: unknown): SeAnswer {
  return { status: 200, body: Buffer.from(JSON.stringify({ value })) };
}
