// chromedriver's refusal of a new session, carried from the node (which logs
// it with DFAILURE) to the manager (which answers the client), so the client
// gets what chromedriver said — its HTTP status, W3C error and whole message —
// as it would talking to chromedriver itself.
import { W3CError } from '../errors.ts';

const PATTERN = /^the driver refused the session \(HTTP (\d{3}) ([a-z ]+)\): ([\s\S]*)$/;

/** The DFAILURE log text for a refusal (readable, and parsed back by driverRefusal). */
export function refusalText(status: number, error: string, message: string): string {
  return `the driver refused the session (HTTP ${status} ${/^[a-z ]+$/.test(error) ? error : 'session not created'}): ${message}`;
}

/** The client's error for a DFAILURE log text that records a refusal, else undefined. */
export function driverRefusal(meta: string): W3CError | undefined {
  const found = PATTERN.exec(meta);
  if (!found) return undefined;
  const status = Number(found[1]);
  return new W3CError(found[2] as never, found[3]!, status >= 400 && status < 600 ? status : 500);
}
