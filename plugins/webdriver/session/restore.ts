// A session whose node and driver are alive survives a Redis restart, as
// browser-grid's sessions do. Once served, a node keeps a copy of its
// session's keys; when its heartbeat finds the session gone from Redis with
// no trace of an end (no status hash at all: Redis restarted empty, or lost
// its data in a failover), it writes them back in one MULTI — the session
// active again, its slot held and taken out of the free lists — instead of
// taking the empty set for "ended elsewhere". A session that really ended
// keeps its status hash (terminatedAt) until gc purges it long after.
import type { Ctx } from '../context.ts';
import { rfc3339 } from './time.ts';

type Flat = Record<string, string>;

export interface SessionRecord {
  status: Flat;
  capabilities: Flat;
  metadata: Flat;
  downstream: Flat;
  upstream: Flat;
  slot: string | null;
  orchestrator: string | null;
}

const toObject = (flat: unknown) => {
  const list = (flat as string[] | null) ?? [];
  const out: Flat = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]!] = list[i + 1]!;
  return out;
};
const pairs = (o: Flat) => Object.entries(o).flat();

/** Reads the session's keys (after it is served), for restoreSession. */
export async function recordSession(ctx: Pick<Ctx, 'backend' | 'keys'>, sessionId: string): Promise<SessionRecord> {
  const { backend, keys } = ctx;
  const s = { sessionId };
  const r = await backend.pipeline([
    ['HGETALL', keys.sessionStatus(s)],
    ['HGETALL', keys.sessionCapabilities(s)],
    ['HGETALL', keys.sessionMetadata(s)],
    ['HGETALL', keys.sessionDownstream(s)],
    ['HGETALL', keys.sessionUpstream(s)],
    ['GET', keys.sessionSlot(s)],
    ['LINDEX', keys.sessionOrchestrator(s), 0],
  ]);
  const [status, capabilities, metadata, downstream, upstream] = r.slice(0, 5).map(toObject) as Flat[];
  return { status: status!, capabilities: capabilities!, metadata: metadata!, downstream: downstream!, upstream: upstream!, slot: (r[5] as string | null) ?? null, orchestrator: (r[6] as string | null) ?? null };
}

/** Did Redis lose the session (not in sessions.active, and no status hash at all)? One round trip. */
export async function sessionLost(ctx: Pick<Ctx, 'backend' | 'keys'>, sessionId: string): Promise<boolean> {
  const [active, status] = (await ctx.backend.pipeline([
    ['SISMEMBER', ctx.keys.sessionsActive(), sessionId],
    ['EXISTS', ctx.keys.sessionStatus({ sessionId })],
  ])) as number[];
  return active === 0 && status === 0;
}

/** Writes the recorded keys back, with the slot held by the session and out of the orchestrator's free lists. */
export async function restoreSession(ctx: Pick<Ctx, 'backend' | 'keys'>, sessionId: string, record: SessionRecord, heartbeatTtl: number): Promise<void> {
  const { backend, keys } = ctx;
  const s = { sessionId };
  const commands: [string, ...(string | number)[]][] = [['SADD', keys.sessionsActive(), sessionId]];
  const hashes: [string, Flat][] = [
    [keys.sessionStatus(s), record.status],
    [keys.sessionCapabilities(s), record.capabilities],
    [keys.sessionMetadata(s), record.metadata],
    [keys.sessionDownstream(s), record.downstream],
    [keys.sessionUpstream(s), record.upstream],
  ];
  for (const [key, fields] of hashes) if (Object.keys(fields).length) commands.push(['HSET', key, ...pairs(fields)]);
  commands.push(['SET', keys.sessionNodeHeartbeat(s), rfc3339(Date.now()), 'EX', Math.ceil(heartbeatTtl)]);
  if (record.orchestrator) commands.push(['DEL', keys.sessionOrchestrator(s)], ['RPUSH', keys.sessionOrchestrator(s), record.orchestrator]);
  if (record.slot) {
    const o = { orchestratorId: record.slot.slice(0, record.slot.lastIndexOf(':')) };
    commands.push(
      ['SET', keys.sessionSlot(s), record.slot],
      // in the slot set before the orchestrator registers again, so it does not start the slot as free
      ['SADD', keys.slots(o), record.slot],
      ['LREM', keys.slotsAvailable(o), 0, record.slot],
      ['LREM', keys.slotsReclaimed(o), 0, record.slot],
      ['HSET', keys.slotsHeld(o), record.slot, sessionId],
    );
  }
  await backend.multi(commands);
}
