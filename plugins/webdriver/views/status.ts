// The grid's capacity, for GET /status and the API: live orchestrators and
// managers, slots in total and free, sessions active; and for /status also
// Selenium Grid 4's shape (value.nodes[] with their slots and sessions), so
// tools written for Selenium Grid read it.
import { withDeadline } from '../../../entries/plugin.ts';
import { MANAGER_HOST_TTL, type Ctx } from '../context.ts';
import { readGrid, type GridModel, type Stereotype } from './grid-model.ts';
import type { SessionView } from './sessions.ts';
import { withCdpUrl } from '../relay/cdp.ts';

export interface Capacity {
  ready: boolean;
  message: string;
  managers: number;
  orchestrators: number;
  slots: { total: number; available: number };
  sessions: { active: number };
}

/** The longest /status waits for Redis: a Redis that does not answer must not hold /status, it makes it say not ready. */
export const STATUS_REDIS_TIMEOUT_MS = 3000;

/**
 * A manager counts as serving while its last heartbeat is younger than this:
 * two heartbeat intervals and a second. A manager heartbeats only while it
 * reaches Redis and its queue loop does too (manager.ts), so one that lost
 * Redis, or whose queue is stuck, stops counting within this bound.
 */
export function managerFreshMs(config: Pick<Ctx['config'], 'heartbeat'>): number {
  return (2 * config.heartbeat.interval + 1) * 1000;
}

/** The grid's capacity; not ready, naming why, when Redis does not answer within STATUS_REDIS_TIMEOUT_MS. */
export async function gridCapacity(ctx: Pick<Ctx, 'backend' | 'keys' | 'clock' | 'config'>): Promise<Capacity> {
  return orUnreachable(readCapacity(ctx), (message) => ({ ready: false, message, managers: 0, orchestrators: 0, slots: { total: 0, available: 0 }, sessions: { active: 0 } }));
}

async function readCapacity(ctx: Pick<Ctx, 'backend' | 'keys' | 'clock' | 'config'>): Promise<Capacity> {
  const { backend, keys, clock } = ctx;
  const freshS = managerFreshMs(ctx.config) / 1000;
  const [ids, managers, known, active] = (await backend.pipeline([
    ['SMEMBERS', keys.orchestrators()],
    ['ZCOUNT', keys.managers(), clock.now() - freshS * 1000, '+inf'],
    ['ZCOUNT', keys.managers(), clock.now() - MANAGER_HOST_TTL * 1000, '+inf'],
    ['SCARD', keys.sessionsActive()],
  ])) as [string[], number, number, number];
  const replies = ids.length
    ? ((await backend.pipeline(
        ids.flatMap((orchestratorId) => [
          ['EXISTS', keys.orchestratorHeartbeat({ orchestratorId })],
          ['SCARD', keys.slots({ orchestratorId })],
          ['LLEN', keys.slotsAvailable({ orchestratorId })],
        ] as [string, string][]),
      )) as number[])
    : [];
  let live = 0;
  let total = 0;
  let available = 0;
  ids.forEach((_id, i) => {
    if (replies[i * 3] !== 1) return;
    live += 1;
    total += replies[i * 3 + 1]!;
    available += replies[i * 3 + 2]!;
  });
  const ready = managers > 0 && live > 0;
  const message = !managers
    ? known
      ? `no manager can serve: none has reached Redis with a working queue in the last ${freshS} s`
      : 'no manager is running'
    : !live
      ? 'no orchestrator is running'
      : `${available} of ${total} slots free on ${live} orchestrator${live === 1 ? '' : 's'}; ${active} active session${active === 1 ? '' : 's'}`;
  return { ready, message, managers, orchestrators: live, slots: { total, available }, sessions: { active } };
}

/** A slot of /status, as Selenium Grid 4 writes it. */
export interface SeleniumSlot {
  id: { hostId: string; id: string };
  lastStarted: string;
  session: null | { sessionId: string; capabilities: unknown; stereotype: Stereotype; start: string; uri: string };
  stereotype: Stereotype;
}

/** A node of /status, as Selenium Grid 4 writes it: here, an orchestrator. */
export interface SeleniumNode {
  id: string;
  uri: string;
  maxSessions: number;
  sessionTimeout: number;
  osInfo: { arch: string; name: string; version: string };
  heartbeatPeriod: number;
  availability: 'UP' | 'DOWN';
  version: string;
  slots: SeleniumSlot[];
}

/** Selenium Grid never-started slots say the epoch. */
const EPOCH = '1970-01-01T00:00:00Z';
export const GRID_VERSION = 'coord webdriver';

/** Where an orchestrator is: it listens on no port of its own (its nodes do, one per session), so a URN names it. */
export const orchestratorUri = (id: string) => `urn:coord:orchestrator:${id}`;

/** When a session started, as Selenium Grid counts it: served, else given its slot, else asked. */
export const sessionStart = (s: SessionView) => s.status.aliveAt ?? s.status.pendingAt ?? s.status.queuedAt ?? EPOCH;
/** The session's capabilities: the driver's once served, those asked for until then. */
export const sessionCapabilities = (s: SessionView) => s.capabilities.actual ?? s.capabilities.requested ?? {};
/** Where the session's node listens, once it does. */
export const sessionUri = (s: SessionView) => (s.upstream.host ? `http://${s.upstream.host.includes(':') ? `[${s.upstream.host}]` : s.upstream.host}:${s.upstream.port}` : '');

/** A session's WebSocket URL as a client reaches the grid (kind: its BiDi or its CDP endpoint). */
export type SocketUrl = (sessionId: string, kind: 'bidi' | 'cdp') => string;

/**
 * A session's capabilities as /status shows them, like Selenium Grid: its
 * WebSockets at the grid's address (se:cdp where it has a CDP endpoint,
 * webSocketUrl where it asked for BiDi), never the node's own.
 */
function shownCapabilities(s: SessionView, socketUrl?: SocketUrl): unknown {
  const caps = sessionCapabilities(s) as Record<string, unknown>;
  if (!socketUrl || !s.capabilities.actual) return caps;
  const shown = { ...caps };
  if (typeof shown.webSocketUrl === 'string') shown.webSocketUrl = socketUrl(s.id, 'bidi');
  withCdpUrl(shown, socketUrl(s.id, 'cdp'));
  return shown;
}

/** Selenium Grid's nodes[] from the grid model. */
export function seleniumNodes(grid: GridModel, timing: { sessionTimeoutMs: number; heartbeatMs: number }, socketUrl?: SocketUrl): SeleniumNode[] {
  return grid.nodes.map((node) => ({
    id: node.id,
    uri: orchestratorUri(node.id),
    maxSessions: node.slots.length,
    sessionTimeout: timing.sessionTimeoutMs,
    osInfo: { arch: '', name: node.platformName, version: '' },
    heartbeatPeriod: timing.heartbeatMs,
    availability: node.up ? 'UP' : 'DOWN',
    version: GRID_VERSION,
    slots: node.slots.map((slot) => ({
      id: { hostId: node.id, id: slot.id },
      lastStarted: slot.session?.status.queuedAt ?? EPOCH,
      session: slot.session
        ? { sessionId: slot.session.id, capabilities: shownCapabilities(slot.session, socketUrl), stereotype: slot.stereotype, start: sessionStart(slot.session), uri: sessionUri(slot.session) }
        : null,
      stereotype: slot.stereotype,
    })),
  }));
}

/** The grid's idle timeout in ms: the `timeouts` hash's, else the configured default. */
export async function sessionTimeoutMs(ctx: Pick<Ctx, 'backend' | 'keys' | 'config'>): Promise<number> {
  const stored = Number(await ctx.backend.send(['HGET', ctx.keys.timeouts(), 'sessionTermination']));
  return (Number.isFinite(stored) && stored > 0 ? stored : ctx.config.timeouts.sessionTermination) * 1000;
}

/** GET /status: coord's capacity fields and Selenium Grid 4's nodes[] with their slots and sessions (their WebSockets at `socketUrl`). */
export async function gridStatus(ctx: Pick<Ctx, 'backend' | 'keys' | 'clock' | 'config'>, socketUrl?: SocketUrl): Promise<Capacity & { nodes: SeleniumNode[] }> {
  const read = Promise.all([readCapacity(ctx), readGrid(ctx), sessionTimeoutMs(ctx)]).then(([capacity, grid, timeout]) => ({
    ...capacity,
    nodes: seleniumNodes(grid, { sessionTimeoutMs: timeout, heartbeatMs: ctx.config.heartbeat.interval * 1000 }, socketUrl),
  }));
  return orUnreachable(read, (message) => ({ ready: false, message, managers: 0, orchestrators: 0, slots: { total: 0, available: 0 }, sessions: { active: 0 }, nodes: [] }));
}

/** `read`, or down(why) when Redis fails it or does not answer in time: Selenium Grid's /status says not ready and why, it does not fail. */
async function orUnreachable<T>(read: Promise<T>, down: (message: string) => T): Promise<T> {
  try {
    return await withDeadline(read, STATUS_REDIS_TIMEOUT_MS);
  } catch (error) {
    return down(`Redis cannot be reached: ${(error as Error).message}`);
  }
}
