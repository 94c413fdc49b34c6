// A node's session on its own chromedriver: the capability set to ask for
// (the one the manager matched, recomputed from the stored request against
// this orchestrator's offer), creating the driver's session, and deleting it.
// chromedriver only answers requests whose Host is local.
import type { Ctx } from '../context.ts';
import { WebDriverError } from '../errors.ts';
import { hop } from '../http/hop.ts';
import { capabilitySets, firstMatch, type Capabilities, type Offer } from '../session/capabilities.ts';
import { refusalText } from './driver-refusal.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** How long deleting a driver's session may take before the node goes on without it. */
const DELETE_TIMEOUT_MS = 10_000;

/** The headers a request to chromedriver takes. */
export function driverHeaders(port: number, contentType?: string): Record<string, string> {
  return { host: `127.0.0.1:${port}`, 'content-type': contentType ?? JSON_TYPE, accept: 'application/json' };
}

/**
 * The capability set the manager matched for the session, recomputed from the
 * stored request against this orchestrator's offer, and the browserName it
 * runs: the one asked for, or (a request naming none) the orchestrator's first
 * entry, Chrome first.
 */
export async function matchedCapabilities(ctx: Ctx, sessionId: string, orchestratorId: string): Promise<{ caps: Capabilities; browserName: string }> {
  const [requested, platformName, browsers] = (await Promise.all([
    ctx.backend.send(['HGET', ctx.keys.sessionCapabilities({ sessionId }), 'requested']),
    ctx.backend.send(['GET', ctx.keys.orchestratorPlatformName({ orchestratorId })]),
    ctx.backend.send(['SMEMBERS', ctx.keys.orchestratorBrowsers({ orchestratorId })]),
  ])) as [string | null, string | null, string[]];
  const offer: Offer = { platformName: platformName ?? 'any', browsers };
  const match = firstMatch(capabilitySets({ capabilities: JSON.parse(requested ?? '{}') }), new Map([[orchestratorId, offer]]));
  if (!match) throw new WebDriverError(`the requested capabilities do not match orchestrator ${orchestratorId}`, { code: 'COORD_ERR_WEBDRIVER_NO_MATCH' });
  const offered = browsers.map((entry) => entry.split('::')[0]!).sort((a, b) => Number(b === 'chrome') - Number(a === 'chrome'));
  const browserName = typeof match.caps.browserName === 'string' ? match.caps.browserName : (offered[0] ?? 'chrome');
  return { caps: match.caps, browserName };
}

/** The driver's new session: its id and actual capabilities; a refusal throws with chromedriver's status, error and message (driver-refusal.ts). */
export async function createDriverSession(port: number, caps: Capabilities, signal: AbortSignal, timeoutMs: number): Promise<{ sessionId: string; capabilities: Capabilities }> {
  const body = Buffer.from(JSON.stringify({ capabilities: { alwaysMatch: caps, firstMatch: [{}] } }));
  const created = await hop({ host: '127.0.0.1', port }, 'POST', '/session', driverHeaders(port), body, signal, timeoutMs);
  const answer = JSON.parse(created.body.toString() || '{}') as { value?: { sessionId?: string; capabilities?: Capabilities; error?: string; message?: string } };
  if (created.status !== 200 || !answer.value?.sessionId) {
    const refusal = refusalText(created.status, answer.value?.error ?? 'session not created', answer.value?.message ?? created.body.toString().slice(0, 2000));
    throw new WebDriverError(refusal, { code: 'COORD_ERR_WEBDRIVER_DRIVER_REFUSED' });
  }
  return { sessionId: answer.value.sessionId, capabilities: answer.value.capabilities ?? {} };
}

/** Deletes the driver's session; true when the driver answered 200 (it can serve another session), false otherwise (never throws). */
export async function deleteDriverSession(port: number, driverSessionId: string): Promise<boolean> {
  const deleted = await hop({ host: '127.0.0.1', port }, 'DELETE', `/session/${driverSessionId}`, driverHeaders(port), undefined, undefined, DELETE_TIMEOUT_MS).catch(() => undefined);
  return deleted?.status === 200;
}
