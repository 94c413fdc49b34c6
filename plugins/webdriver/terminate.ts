// Ending a session, from whichever role sees it end: the terminateSession
// script does it atomically and exactly once (slot → slots.reclaimed, SMOVE
// sessions.active → sessions.terminated, terminatedAt), logging why.
import { codes, type Code, type Component } from './codes.ts';
import { LOG_MAX_LENGTH, type Ctx } from './context.ts';
import { keyTail } from './key-tails.ts';
import { rfc3339, secondsSince } from './time.ts';

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
