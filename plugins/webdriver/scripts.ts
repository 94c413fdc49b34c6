// The one module that calls the grid's Lua scripts (lua/*.lua, typed by
// scripts.gen.ts): one function per atomic step, with the keys and arguments
// the roles give it. Roles, scenarios and tests call these and never the
// script runner, so a script's call shape is written once.
import { codes, type Code, type Component } from './session/log-codes.ts';
import { LOG_MAX_LENGTH, MANAGER_HOST_TTL, type Ctx } from './context.ts';
import { keyTail } from './key-tails.ts';
import { rfc3339, secondsSince } from './session/time.ts';

/** Upper bounds (seconds) of the startup histogram's buckets. */
export const STARTUP_BUCKETS = ['0.5', '1', '2', '5', '10', '30', '60', '120', '300', '+Inf'];

const RETAIN_TTL = 604800;
const ORCHESTRATOR_HEARTBEAT_TTL = 60;

export interface NewSession {
  sessionId: string;
  requested: unknown;
  name?: string;
  build?: string;
  clientHost: string;
  userAgent: string;
  meta: string;
}

/** QUEUED: the session's records, active, the manager's heartbeat. */
export async function queueSession(ctx: Ctx, s: NewSession): Promise<void> {
  const k = { sessionId: s.sessionId };
  await ctx.scripts.run('queueSession', {
    keys: { active: {}, status: k, capabilities: k, metadata: k, downstream: k, heartbeat: k, log: k, total: {}, counts: { level: 'info' } },
    args: {
      sessionId: s.sessionId,
      now: rfc3339(ctx.clock.now()),
      requested: JSON.stringify(s.requested),
      name: s.name ?? '',
      build: s.build ?? '',
      clientHost: s.clientHost,
      userAgent: s.userAgent,
      heartbeatTtl: Math.ceil(ctx.config.heartbeat.managerTtl),
      meta: s.meta,
      maxLen: LOG_MAX_LENGTH,
    },
  });
}

/** NALLOC: the session holds the slot and waits in the orchestrator's backlog; false (slot given back) when the session has ended. */
export async function allocateSlot(ctx: Ctx, sessionId: string, orchestratorId: string, slot: string): Promise<boolean> {
  const s = { sessionId };
  const o = { orchestratorId };
  const reply = await ctx.scripts.run('allocateSlot', {
    keys: { active: {}, slot: s, held: o, available: o, backlog: o, log: s, counts: { level: 'info' } },
    args: { sessionId, slotId: slot, meta: `slot ${slot}`, maxLen: LOG_MAX_LENGTH },
  });
  return reply === 1;
}

/** SCHED: 1 scheduled now, 2 scheduled before (a restart), 0 gone (and out of pending). */
export async function scheduleSession(ctx: Ctx, sessionId: string, orchestratorId: string, meta: string): Promise<0 | 1 | 2> {
  const s = { sessionId };
  const now = ctx.clock.now();
  const queuedAt = (await ctx.backend.send(['HGET', ctx.keys.sessionStatus(s), 'queuedAt'])) as string | null;
  return (await ctx.scripts.run('scheduleSession', {
    keys: { active: {}, pending: { orchestratorId }, status: s, orchestrator: s, log: s, total: {}, duration: {}, counts: { level: 'info' } },
    args: { sessionId, orchestratorId, now: rfc3339(now), queuedSeconds: secondsSince(queuedAt, now), meta, maxLen: LOG_MAX_LENGTH },
  })) as 0 | 1 | 2;
}

/** When the session was queued and scheduled, as session:ID:status holds them. */
export interface Stamps {
  queuedAt: string | null;
  pendingAt: string | null;
}

/** NALIVE: aliveAt, counts, the startup histogram. False when the session has ended. `stamps`, when the caller has read them already, saves a round trip. */
export async function markAlive(ctx: Ctx, sessionId: string, meta: string, stamps?: Stamps): Promise<boolean> {
  const s = { sessionId };
  const { queuedAt, pendingAt } = stamps ?? (await readStamps(ctx, sessionId));
  const now = ctx.clock.now();
  const reply = await ctx.scripts.run('markAlive', {
    keys: { active: {}, status: s, log: s, total: {}, duration: {}, count: {}, sum: {}, buckets: {}, counts: { level: 'info' }, ready: s },
    args: {
      sessionId,
      now: rfc3339(now),
      pendingSeconds: secondsSince(pendingAt, now),
      startupSeconds: secondsSince(queuedAt, now),
      meta,
      maxLen: LOG_MAX_LENGTH,
      bounds: STARTUP_BUCKETS,
    },
  });
  return reply === 1;
}

export async function readStamps(ctx: Ctx, sessionId: string): Promise<Stamps> {
  const [queuedAt, pendingAt] = (await ctx.backend.send(['HMGET', ctx.keys.sessionStatus({ sessionId }), 'queuedAt', 'pendingAt'])) as (string | null)[];
  return { queuedAt: queuedAt ?? null, pendingAt: pendingAt ?? null };
}

export interface OrchestratorOffer {
  orchestratorId: string;
  type: 'local' | 'docker' | 'k8s';
  platformName: string;
  browsers: readonly string[];
  slots: number;
}

/** Registration and heartbeat: type, liveness, retain, offer, exactly `slots` slots. Returns how many slots were added. */
export async function registerOrchestrator(ctx: Ctx, offer: OrchestratorOffer): Promise<number> {
  const o = { orchestratorId: offer.orchestratorId };
  return (await ctx.scripts.run('registerOrchestrator', {
    keys: { orchestrators: {}, orchestrator: o, heartbeat: o, retain: o, platform: o, browsers: o, slots: o, available: o, reclaimed: o },
    args: {
      orchestratorId: offer.orchestratorId,
      type: offer.type,
      nowMs: String(ctx.clock.now()),
      heartbeatTtl: ORCHESTRATOR_HEARTBEAT_TTL,
      retainTtl: RETAIN_TTL,
      platformName: offer.platformName,
      slotCount: offer.slots,
      browsers: [...offer.browsers],
    },
  })) as number;
}

export interface ReclaimPass {
  /** Slots given back as orphaned in this pass. */
  orphaned: string[];
  /** Slots found unheld: orphaned at the next pass if still so. */
  suspects: string[];
  /** Sessions holding a slot with neither heartbeat: to terminate as dead. */
  dead: string[];
}

export async function reclaimSlots(ctx: Ctx, orchestratorId: string, suspects: readonly string[]): Promise<ReclaimPass> {
  const o = { orchestratorId };
  const [orphaned, next, dead] = (await ctx.scripts.run('reclaimSlots', {
    keys: { slots: o, available: o, reclaimed: o, held: o, active: {}, reclaimedTotal: {} },
    args: { nodeTail: keyTail('sessionNodeHeartbeat'), managerTail: keyTail('sessionManagerHeartbeat'), suspects: [...suspects] },
  })) as [string[], string[], string[]];
  return { orphaned, suspects: next, dead };
}

/** gc: a terminated session and every key it had. Returns how many keys were deleted. */
export async function purgeSession(ctx: Ctx, sessionId: string): Promise<number> {
  return (await ctx.scripts.run('purgeSession', { keys: { terminated: {}, ...sessionOwnKeys(sessionId) }, args: { sessionId } })) as number;
}

/** The keys of one session that purgeSession deletes and measureSession weighs (each script names them in its header). */
function sessionOwnKeys(sessionId: string) {
  const s = { sessionId };
  return { status: s, nodeHeartbeat: s, managerHeartbeat: s, slot: s, orchestrator: s, log: s, capabilities: s, metadata: s, upstream: s, downstream: s, ready: s, storage: s };
}

/** gc: the Redis memory of a terminated session's keys (an estimate on a backend without MEMORY USAGE), kept in its status as `bytes`. */
export async function measureSession(ctx: Ctx, sessionId: string): Promise<number> {
  return (await ctx.scripts.run('measureSession', { keys: sessionOwnKeys(sessionId), args: {} })) as number;
}

/** gc: an orchestrator whose retain key has expired, with all its keys. False while it is still retained. */
export async function forgetOrchestrator(ctx: Ctx, orchestratorId: string): Promise<boolean> {
  const o = { orchestratorId };
  const reply = await ctx.scripts.run('forgetOrchestrator', {
    keys: { orchestrators: {}, retain: o, orchestrator: o, heartbeat: o, platform: o, browsers: o, reclaimed: o, available: o, slots: o, held: o, backlog: o, pending: o },
    args: { orchestratorId },
  });
  return reply === 1;
}

const freedTail = keyTail('managerFreed');

/** Notices a manager keeps unread (slots.freed): more are dropped, and its sweep finds their slots. */
const FREED_CAP = 10_000;

/**
 * A slot is back on the orchestrator's slots.available: each live manager is told on its slots.freed
 * (what its one blocking wait watches for every orchestrator's slots). Returns how many were told.
 */
export async function announceSlot(ctx: Ctx, orchestratorId: string): Promise<number> {
  return (await ctx.scripts.run('announceSlot', {
    keys: { managers: {} },
    args: { freedTail, orchestratorId, sinceMs: String(ctx.clock.now() - MANAGER_HOST_TTL * 1000), ttl: MANAGER_HOST_TTL, cap: FREED_CAP },
  })) as number;
}

/** One entry of a session's log stream (component, level, code, meta), counted in metrics:sessions:log:{level}. */
export async function appendLog(ctx: Ctx, sessionId: string, component: Component, code: Code, meta = ''): Promise<void> {
  const level = codes[code];
  await ctx.scripts.run('appendLog', {
    keys: { log: { sessionId }, counts: { level } },
    args: { component, level, code, meta, maxLen: LOG_MAX_LENGTH },
  });
}

export interface Termination {
  component: Component;
  code?: Code;
  meta?: string;
  /** Counts the slot given back as reclaimed from a dead session or an orphaned slot. */
  reason?: 'dead' | 'orphaned';
}

export interface Terminated {
  /** False when the session had already ended. */
  terminated: boolean;
  /** The slot given back, or ''. */
  slot: string;
}

const heldTail = keyTail('slotsHeld');
const reclaimedTail = keyTail('slotsReclaimed');

/**
 * Ends a session, from whichever role sees it end: atomically and exactly once
 * (slot → slots.reclaimed, SMOVE sessions.active → sessions.terminated,
 * terminatedAt), logging why.
 */
export async function terminateSession(ctx: Ctx, sessionId: string, why: Termination): Promise<Terminated> {
  const now = ctx.clock.now();
  const [queuedAt, pendingAt, aliveAt] = (await ctx.backend.send(['HMGET', ctx.keys.sessionStatus({ sessionId }), 'queuedAt', 'pendingAt', 'aliveAt'])) as (string | null)[];
  // the state it leaves, and since when: its time there is added to sessions' duration metrics
  const [state, since] = aliveAt ? ['alive', aliveAt] : pendingAt ? ['pending', pendingAt] : ['queued', queuedAt];
  const level = why.code ? codes[why.code] : 'info';
  const [done, slot] = (await ctx.scripts.run('terminateSession', {
    keys: {
      active: {},
      terminated: {},
      status: { sessionId },
      slot: { sessionId },
      log: { sessionId },
      total: {},
      duration: {},
      counts: { level },
      reclaimedTotal: {},
      ready: { sessionId },
    },
    args: {
      heldTail,
      reclaimedTail,
      sessionId,
      now: rfc3339(now),
      state,
      stateSeconds: secondsSince(since, now),
      reason: why.reason ?? '',
      component: why.component,
      level,
      code: why.code ?? '',
      meta: why.meta ?? '',
      maxLen: LOG_MAX_LENGTH,
    },
  })) as [number, string];
  return { terminated: done === 1, slot };
}
