// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from '../../entries/plugin.ts';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface WebDriverScripts {
  /** allocateSlot: the manager popped a slot for a session (NALLOC): the session holds it and waits in the orchestrator's backlog. */
  allocateSlot: {
    keys: {
      active: ScriptKey<K, 'sessionsActive'>;
      slot: ScriptKey<K, 'sessionSlot'>;
      held: ScriptKey<K, 'slotsHeld'>;
      available: ScriptKey<K, 'slotsAvailable'>;
      backlog: ScriptKey<K, 'backlog'>;
      log: ScriptKey<K, 'sessionLog'>;
      counts: ScriptKey<K, 'logCounts'>;
    };
    args: { sessionId: ScriptArg; slotId: ScriptArg; meta: ScriptArg; maxLen: ScriptArg };
  };
  /** announceSlot: an orchestrator put a slot back on its slots.available; each live manager (heard from since sinceMs) gets the orchestrator's ID on its slots.freed list, so a manager blocks on that one list rather than naming every orchestrator's slots.available in each BLPOP (a cost that grew with the fleet). */
  announceSlot: {
    keys: { managers: ScriptKey<K, 'managers'> };
    args: { freedTail: ScriptArg; orchestratorId: ScriptArg; sinceMs: ScriptArg; ttl: ScriptArg; cap: ScriptArg };
  };
  /** appendLog: one entry of a session's log, and its count in the log metrics. */
  appendLog: {
    keys: { log: ScriptKey<K, 'sessionLog'>; counts: ScriptKey<K, 'logCounts'> };
    args: { component: ScriptArg; level: ScriptArg; code: ScriptArg; meta: ScriptArg; maxLen: ScriptArg };
  };
  /** forgetOrchestrator: gc forgets an orchestrator whose retain key has expired (no live orchestrator has refreshed it for its whole TTL), with all its keys. */
  forgetOrchestrator: {
    keys: {
      orchestrators: ScriptKey<K, 'orchestrators'>;
      retain: ScriptKey<K, 'orchestratorRetain'>;
      orchestrator: ScriptKey<K, 'orchestrator'>;
      heartbeat: ScriptKey<K, 'orchestratorHeartbeat'>;
      platform: ScriptKey<K, 'orchestratorPlatformName'>;
      browsers: ScriptKey<K, 'orchestratorBrowsers'>;
      reclaimed: ScriptKey<K, 'slotsReclaimed'>;
      available: ScriptKey<K, 'slotsAvailable'>;
      slots: ScriptKey<K, 'slots'>;
      held: ScriptKey<K, 'slotsHeld'>;
      backlog: ScriptKey<K, 'backlog'>;
      pending: ScriptKey<K, 'pending'>;
    };
    args: { orchestratorId: ScriptArg };
  };
  /** markAlive: the node answers and the client is served (NALIVE): aliveAt, counted, time spent pending, and the startup histogram (queuedAt → aliveAt); the node's announcement on session:ID:ready has served its purpose. */
  markAlive: {
    keys: {
      active: ScriptKey<K, 'sessionsActive'>;
      status: ScriptKey<K, 'sessionStatus'>;
      log: ScriptKey<K, 'sessionLog'>;
      total: ScriptKey<K, 'sessionsTotal'>;
      duration: ScriptKey<K, 'sessionsDuration'>;
      count: ScriptKey<K, 'startupCount'>;
      sum: ScriptKey<K, 'startupSum'>;
      buckets: ScriptKey<K, 'startupBuckets'>;
      counts: ScriptKey<K, 'logCounts'>;
      ready: ScriptKey<K, 'sessionReady'>;
    };
    args: {
      sessionId: ScriptArg;
      now: ScriptArg;
      pendingSeconds: ScriptArg;
      startupSeconds: ScriptArg;
      meta: ScriptArg;
      maxLen: ScriptArg;
      bounds: ScriptArg | readonly ScriptArg[];
    };
  };
  /** measureSession: gc weighs a terminated session once, so that the history can be bounded in bytes (gc.maxBytes): the Redis memory of every key the session has (MEMORY USAGE), kept in its status hash as `bytes`. */
  measureSession: {
    keys: {
      status: ScriptKey<K, 'sessionStatus'>;
      nodeHeartbeat: ScriptKey<K, 'sessionNodeHeartbeat'>;
      managerHeartbeat: ScriptKey<K, 'sessionManagerHeartbeat'>;
      slot: ScriptKey<K, 'sessionSlot'>;
      orchestrator: ScriptKey<K, 'sessionOrchestrator'>;
      log: ScriptKey<K, 'sessionLog'>;
      capabilities: ScriptKey<K, 'sessionCapabilities'>;
      metadata: ScriptKey<K, 'sessionMetadata'>;
      upstream: ScriptKey<K, 'sessionUpstream'>;
      downstream: ScriptKey<K, 'sessionDownstream'>;
      ready: ScriptKey<K, 'sessionReady'>;
      storage: ScriptKey<K, 'sessionStorage'>;
    };
    args: Record<string, never>;
  };
  /** purgeSession: gc forgets a terminated session and every key it had. */
  purgeSession: {
    keys: {
      terminated: ScriptKey<K, 'sessionsTerminated'>;
      nodeHeartbeat: ScriptKey<K, 'sessionNodeHeartbeat'>;
      managerHeartbeat: ScriptKey<K, 'sessionManagerHeartbeat'>;
      slot: ScriptKey<K, 'sessionSlot'>;
      orchestrator: ScriptKey<K, 'sessionOrchestrator'>;
      log: ScriptKey<K, 'sessionLog'>;
      status: ScriptKey<K, 'sessionStatus'>;
      capabilities: ScriptKey<K, 'sessionCapabilities'>;
      metadata: ScriptKey<K, 'sessionMetadata'>;
      upstream: ScriptKey<K, 'sessionUpstream'>;
      downstream: ScriptKey<K, 'sessionDownstream'>;
      ready: ScriptKey<K, 'sessionReady'>;
      storage: ScriptKey<K, 'sessionStorage'>;
    };
    args: { sessionId: ScriptArg };
  };
  /** queueSession: a new session enters the grid (QUEUED): active, queuedAt, requested capabilities, metadata, downstream, the manager's heartbeat, counted. */
  queueSession: {
    keys: {
      active: ScriptKey<K, 'sessionsActive'>;
      status: ScriptKey<K, 'sessionStatus'>;
      capabilities: ScriptKey<K, 'sessionCapabilities'>;
      metadata: ScriptKey<K, 'sessionMetadata'>;
      downstream: ScriptKey<K, 'sessionDownstream'>;
      heartbeat: ScriptKey<K, 'sessionManagerHeartbeat'>;
      log: ScriptKey<K, 'sessionLog'>;
      total: ScriptKey<K, 'sessionsTotal'>;
      counts: ScriptKey<K, 'logCounts'>;
    };
    args: {
      sessionId: ScriptArg;
      now: ScriptArg;
      requested: ScriptArg;
      name: ScriptArg;
      build: ScriptArg;
      clientHost: ScriptArg;
      userAgent: ScriptArg;
      heartbeatTtl: ScriptArg;
      meta: ScriptArg;
      maxLen: ScriptArg;
    };
  };
  /** reclaimSlots: one pass of an orchestrator's slot reclaim. */
  reclaimSlots: {
    keys: {
      slots: ScriptKey<K, 'slots'>;
      available: ScriptKey<K, 'slotsAvailable'>;
      reclaimed: ScriptKey<K, 'slotsReclaimed'>;
      held: ScriptKey<K, 'slotsHeld'>;
      active: ScriptKey<K, 'sessionsActive'>;
      reclaimedTotal: ScriptKey<K, 'slotsReclaimedTotal'>;
    };
    args: { nodeTail: ScriptArg; managerTail: ScriptArg; suspects: ScriptArg | readonly ScriptArg[] };
  };
  /** registerOrchestrator: an orchestrator announces itself (at start and every heartbeat): type, heartbeat, retain, platform, browsers, and exactly `slotCount` slots — a new slot starts available, a slot beyond the count is dropped unless a session holds it (then it is dropped when it comes back). */
  registerOrchestrator: {
    keys: {
      orchestrators: ScriptKey<K, 'orchestrators'>;
      orchestrator: ScriptKey<K, 'orchestrator'>;
      heartbeat: ScriptKey<K, 'orchestratorHeartbeat'>;
      retain: ScriptKey<K, 'orchestratorRetain'>;
      platform: ScriptKey<K, 'orchestratorPlatformName'>;
      browsers: ScriptKey<K, 'orchestratorBrowsers'>;
      slots: ScriptKey<K, 'slots'>;
      available: ScriptKey<K, 'slotsAvailable'>;
      reclaimed: ScriptKey<K, 'slotsReclaimed'>;
    };
    args: {
      orchestratorId: ScriptArg;
      type: ScriptArg;
      nowMs: ScriptArg;
      heartbeatTtl: ScriptArg;
      retainTtl: ScriptArg;
      platformName: ScriptArg;
      slotCount: ScriptArg;
      browsers: ScriptArg | readonly ScriptArg[];
    };
  };
  /** scheduleSession: the orchestrator took a session from its backlog into pending (reliable queue) and schedules its node (SCHED): pendingAt, the orchestrator's ID on session:ID:orchestrator (what the manager waits on), counted. */
  scheduleSession: {
    keys: {
      active: ScriptKey<K, 'sessionsActive'>;
      pending: ScriptKey<K, 'pending'>;
      status: ScriptKey<K, 'sessionStatus'>;
      orchestrator: ScriptKey<K, 'sessionOrchestrator'>;
      log: ScriptKey<K, 'sessionLog'>;
      total: ScriptKey<K, 'sessionsTotal'>;
      duration: ScriptKey<K, 'sessionsDuration'>;
      counts: ScriptKey<K, 'logCounts'>;
    };
    args: { sessionId: ScriptArg; orchestratorId: ScriptArg; now: ScriptArg; queuedSeconds: ScriptArg; meta: ScriptArg; maxLen: ScriptArg };
  };
  /** terminateSession: a session ends, exactly once, atomically: it moves from sessions.active to sessions.terminated, terminatedAt is set, and the slot it held goes back to its orchestrator's slots.reclaimed (the slot ID names the orchestrator: '<orchestratorId>:<n>', so those two keys are built here from their contract head and tail). */
  terminateSession: {
    keys: {
      active: ScriptKey<K, 'sessionsActive'>;
      terminated: ScriptKey<K, 'sessionsTerminated'>;
      status: ScriptKey<K, 'sessionStatus'>;
      slot: ScriptKey<K, 'sessionSlot'>;
      log: ScriptKey<K, 'sessionLog'>;
      total: ScriptKey<K, 'sessionsTotal'>;
      duration: ScriptKey<K, 'sessionsDuration'>;
      counts: ScriptKey<K, 'logCounts'>;
      reclaimedTotal: ScriptKey<K, 'slotsReclaimedTotal'>;
      ready: ScriptKey<K, 'sessionReady'>;
    };
    args: {
      heldTail: ScriptArg;
      reclaimedTail: ScriptArg;
      sessionId: ScriptArg;
      now: ScriptArg;
      state: ScriptArg;
      stateSeconds: ScriptArg;
      reason: ScriptArg;
      component: ScriptArg;
      level: ScriptArg;
      code: ScriptArg;
      meta: ScriptArg;
      maxLen: ScriptArg;
    };
  };
}
