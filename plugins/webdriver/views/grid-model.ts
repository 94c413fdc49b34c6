// The grid as Selenium Grid's /status, its GraphQL and the grid page show it:
// each orchestrator is a node with its slots, each slot with the session
// holding it (if any), and the queue — sessions still waiting for a slot.
// Read from Redis on each call (one pipeline for the orchestrators, one for
// the sessions).
import type { Ctx } from '../context.ts';
import { readSessions, type SessionView } from './sessions.ts';

type Reader = Pick<Ctx, 'backend' | 'keys' | 'clock'>;

/** What a slot offers, as Selenium Grid's stereotypes say it. */
export interface Stereotype {
  browserName: string;
  browserVersion: string;
  platformName: string;
}

export interface GridSlot {
  id: string;
  stereotype: Stereotype;
  /** The session holding the slot (from allocation until it ends). */
  session?: SessionView;
}

export interface GridNode {
  id: string;
  /** Its heartbeat is live. */
  up: boolean;
  platformName: string;
  stereotypes: Stereotype[];
  slots: GridSlot[];
}

export interface GridModel {
  nodes: GridNode[];
  /** Sessions waiting for a slot, oldest first. */
  queue: SessionView[];
}

/** 'chrome::156.0.1.2' on platform linux → { browserName: 'chrome', browserVersion: '156.0.1.2', platformName: 'linux' }. */
export function stereotypeOf(entry: string, platformName: string): Stereotype {
  const at = entry.indexOf('::');
  return { browserName: at === -1 ? entry : entry.slice(0, at), browserVersion: at === -1 ? '' : entry.slice(at + 2), platformName };
}

const slotNumber = (slot: string) => Number(slot.slice(slot.lastIndexOf(':') + 1));

export async function readGrid(ctx: Reader): Promise<GridModel> {
  const { backend, keys } = ctx;
  const [ids, active] = (await backend.pipeline([
    ['SMEMBERS', keys.orchestrators()],
    ['SMEMBERS', keys.sessionsActive()],
  ])) as [string[], string[]];
  ids.sort();
  const per = 5;
  const replies = ids.length
    ? ((await backend.pipeline(
        ids.flatMap((orchestratorId) => {
          const o = { orchestratorId };
          return [
            ['EXISTS', keys.orchestratorHeartbeat(o)],
            ['GET', keys.orchestratorPlatformName(o)],
            ['SMEMBERS', keys.orchestratorBrowsers(o)],
            ['SMEMBERS', keys.slots(o)],
            ['HGETALL', keys.slotsHeld(o)],
          ] as [string, ...string[]][];
        }),
      )) as unknown[])
    : [];
  const raw = ids.map((id, i) => {
    const r = replies.slice(i * per, i * per + per) as [number, string | null, string[], string[], string[]];
    const held = new Map<string, string>();
    for (let j = 0; j + 1 < r[4].length; j += 2) held.set(r[4][j]!, r[4][j + 1]!);
    return { id, up: r[0] === 1, platformName: r[1] ?? 'any', browsers: [...r[2]].sort(), slots: [...r[3]].sort((a, b) => slotNumber(a) - slotNumber(b)), held };
  });
  const heldIds = raw.flatMap((o) => [...o.held.values()]);
  const views = new Map((await readSessions(ctx, [...new Set([...heldIds, ...active])])).map((v) => [v.id, v]));
  const nodes = raw.map((o): GridNode => {
    // Chrome first: a free slot shows the first (an orchestrator offering several browsers shares its slots among them)
    const stereotypes = o.browsers.map((b) => stereotypeOf(b, o.platformName)).sort((a, b) => Number(b.browserName === 'chrome') - Number(a.browserName === 'chrome'));
    const stereotype = stereotypes[0] ?? { browserName: '', browserVersion: '', platformName: o.platformName };
    /** The stereotype of the browser a session in the slot runs, else the first. */
    const stereotypeFor = (session: SessionView | undefined) => stereotypes.find((s) => session && s.browserName === browserNameOf(session)) ?? stereotype;
    return {
      id: o.id,
      up: o.up,
      platformName: o.platformName,
      stereotypes,
      slots: o.slots.map((id) => {
        const holder = o.held.get(id);
        const session = holder ? views.get(holder) : undefined;
        const live = session && session.state !== 'terminated' ? session : undefined;
        return { id, stereotype: stereotypeFor(live), session: live };
      }),
    };
  });
  const holding = new Set(heldIds);
  const queue = active
    .map((id) => views.get(id))
    .filter((v): v is SessionView => !!v && v.state === 'queued' && !v.slot && !holding.has(v.id))
    .sort((a, b) => (a.status.queuedAt ?? '').localeCompare(b.status.queuedAt ?? ''));
  return { nodes, queue };
}

/** The `limit` sessions that ended last, newest first (one HGET per terminated session to order them, then their views). */
export async function readEnded(ctx: Reader, limit: number): Promise<SessionView[]> {
  const { backend, keys } = ctx;
  const ids = (await backend.send(['SMEMBERS', keys.sessionsTerminated()])) as string[];
  if (!ids.length || limit <= 0) return [];
  const ends = (await backend.pipeline(ids.map((sessionId) => ['HGET', keys.sessionStatus({ sessionId }), 'terminatedAt']))) as (string | null)[];
  const newest = ids
    .map((id, i) => [id, typeof ends[i] === 'string' ? ends[i] : ''] as const)
    .sort((a, b) => b[1].localeCompare(a[1]))
    .slice(0, limit)
    .map(([id]) => id);
  return (await readSessions(ctx, newest)).sort((a, b) => (b.status.terminatedAt ?? '').localeCompare(a.status.terminatedAt ?? ''));
}

/** The browserName a session asked for and was matched on (its driver's answer, else its request). */
function browserNameOf(session: SessionView): unknown {
  const actual = session.capabilities.actual as { browserName?: unknown } | undefined;
  if (actual?.browserName) return actual.browserName;
  const requested = session.capabilities.requested as { alwaysMatch?: { browserName?: unknown }; firstMatch?: { browserName?: unknown }[] } | undefined;
  return requested?.alwaysMatch?.browserName ?? requested?.firstMatch?.find((m) => m.browserName)?.browserName;
}
