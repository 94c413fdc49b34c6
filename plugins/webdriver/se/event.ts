// Selenium's Session Event API (Selenium 4.41+): a client marks a test step
// with POST /session/{id}/se/event {"eventType": "test:started", "payload":
// {...}?} (selenium-webdriver's fireSessionEvent, Python's
// fire_session_event) and is answered {"success": true, "eventType",
// "timestamp"}. Selenium Grid hands it to its event bus, where its video
// recorder and sidecars listen; here it is an EVENT entry of the session's
// log stream, which the grid page and the recording's timeline show.
import { parseJson } from '../http/serve.ts';
import type { LogEntry } from '../session/log.ts';
import { W3CError } from '../errors.ts';

/** Longest eventType taken. */
const TYPE_LIMIT = 200;
/** Largest event (its JSON) kept in the log. */
const EVENT_LIMIT = 8192;

/** One event as a client sends it. */
export interface SessionEvent {
  eventType: string;
  payload: Record<string, unknown> | null;
}

/** One event as the log keeps it: with its place in the session's recording (seconds into the video) when it is recorded. */
export interface LoggedEvent extends SessionEvent {
  time: string;
  offset: number | null;
}

/** The event a request body asks to record; a W3C invalid argument for anything else. */
export function readEvent(body: Buffer): SessionEvent {
  const asked = parseJson(body) as { eventType?: unknown; payload?: unknown } | null;
  const eventType = asked?.eventType;
  if (typeof eventType !== 'string' || !eventType.trim()) throw new W3CError('invalid argument', 'se/event: the body must be {"eventType": "<a non-empty string>", "payload"?: {...}}');
  if (eventType.length > TYPE_LIMIT) throw new W3CError('invalid argument', `se/event: eventType is longer than ${TYPE_LIMIT} characters`);
  const payload = asked?.payload ?? null;
  if (payload !== null && (typeof payload !== 'object' || Array.isArray(payload))) throw new W3CError('invalid argument', 'se/event: payload must be a JSON object when given');
  const event = { eventType, payload: payload as Record<string, unknown> | null };
  if (JSON.stringify(event).length > EVENT_LIMIT) throw new W3CError('invalid argument', `se/event: the event is larger than ${EVENT_LIMIT} bytes of JSON`);
  return event;
}

/** The events among a session's log entries. */
export function eventsOf(log: LogEntry[]): LoggedEvent[] {
  return log.flatMap((entry) => {
    if (entry.code !== 'EVENT') return [];
    try {
      const event = JSON.parse(entry.meta) as SessionEvent & { offset?: unknown };
      return [{ time: entry.time, eventType: String(event.eventType), payload: event.payload ?? null, offset: typeof event.offset === 'number' ? event.offset : null }];
    } catch {
      return [];
    }
  });
}
