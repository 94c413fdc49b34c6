// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from '../../entries/plugin.ts';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface BrowserGridScripts {
  /** attachSession: the client of a session created with POST /v1/sessions attaches, at any proxy. */
  attachSession: {
    keys: { session: ScriptKey<K, 'session'>; fromLeases: ScriptKey<K, 'leases'>; toLeases: ScriptKey<K, 'leases'> };
    args: { sessionId: ScriptArg; fromProxy: ScriptArg; toProxy: ScriptArg; nowMs: ScriptArg };
  };
  /** endSession: a session created with POST /v1/sessions ends, once: the first of its ends (attached and closed, deleted, expired unattached, failed) decides its status; the others find it ended and change nothing. */
  endSession: {
    keys: { session: ScriptKey<K, 'session'> };
    args: { from: ScriptArg; to: ScriptArg; nowMs: ScriptArg; reason: ScriptArg; retentionS: ScriptArg };
  };
  /** enqueue: a client waits for a worker. */
  enqueue: {
    keys: { queue: ScriptKey<K, 'queue'> };
    args: { ticket: ScriptArg; nowMs: ScriptArg; maxQueue: ScriptArg };
  };
  /** readWorkers: what /status and /v1 show of a page of workers (their fields and counters), in one call rather than three commands each: at 10,000 workers a proxy answers in about a third of the time. */
  readWorkers: {
    keys: { active: ScriptKey<K, 'activeConnections'>; lifetime: ScriptKey<K, 'lifetimeConnections'> };
    args: { refs: ScriptArg | readonly ScriptArg[] };
  };
  /** reapProxy: gives back the capacity held by a proxy that stopped heartbeating (killed -9): each of its leases decrements its worker's active count once, never below zero, never recreating a reaped worker's field. */
  reapProxy: {
    keys: { active: ScriptKey<K, 'activeConnections'>; proxyIndex: ScriptKey<K, 'proxyIndex'>; leases: ScriptKey<K, 'leases'> };
    args: { proxyId: ScriptArg; nowMs: ScriptArg; staleMs: ScriptArg };
  };
  /** reapWorkers: removes the workers of one browser type whose heartbeat is older than the stale threshold, with their counter fields. */
  reapWorkers: {
    keys: {
      active: ScriptKey<K, 'activeConnections'>;
      lifetime: ScriptKey<K, 'lifetimeConnections'>;
      workerIndex: ScriptKey<K, 'workerIndex'>;
      freeIndex: ScriptKey<K, 'freeIndex'>;
    };
    args: { nowMs: ScriptArg; staleMs: ScriptArg; limit: ScriptArg };
  };
  /** releaseConnection: a relayed session closed. */
  releaseConnection: {
    keys: {
      active: ScriptKey<K, 'activeConnections'>;
      lifetime: ScriptKey<K, 'lifetimeConnections'>;
      freeIndex: ScriptKey<K, 'freeIndex'>;
      leases: ScriptKey<K, 'leases'>;
      versions: ScriptKey<K, 'versions'>;
    };
    args: { connectionId: ScriptArg; nowMs: ScriptArg; staleMs: ScriptArg; maxConcurrent: ScriptArg; maxLifetime: ScriptArg; rollback: ScriptArg };
  };
  /** removeWorker: a worker leaves (after draining) or is reaped: its hash, its counter fields and its index entries go together; the last worker of its type takes the type's versions with it, so a clean stop leaves no key behind. */
  removeWorker: {
    keys: {
      worker: ScriptKey<K, 'worker'>;
      active: ScriptKey<K, 'activeConnections'>;
      lifetime: ScriptKey<K, 'lifetimeConnections'>;
      workerIndex: ScriptKey<K, 'workerIndex'>;
      freeIndex: ScriptKey<K, 'freeIndex'>;
      versions: ScriptKey<K, 'versions'>;
    };
    args: { ref: ScriptArg };
  };
  /** restoreLeases: a proxy files again the sessions it relays right now. */
  restoreLeases: {
    keys: { active: ScriptKey<K, 'activeConnections'>; leases: ScriptKey<K, 'leases'> };
    args: { sessions: ScriptArg | readonly ScriptArg[] };
  };
  /** selectWorker: playwright-distributed's selector at a cost that does not grow with the fleet. */
  selectWorker: {
    keys: {
      active: ScriptKey<K, 'activeConnections'>;
      lifetime: ScriptKey<K, 'lifetimeConnections'>;
      workerIndex: ScriptKey<K, 'workerIndex'>;
      freeIndex: ScriptKey<K, 'freeIndex'>;
      queue: ScriptKey<K, 'queue'>;
      leases: ScriptKey<K, 'leases'>;
      versions: ScriptKey<K, 'versions'>;
    };
    args: {
      nowMs: ScriptArg;
      staleMs: ScriptArg;
      maxConcurrent: ScriptArg;
      maxLifetime: ScriptArg;
      connectionId: ScriptArg;
      ticket: ScriptArg;
      exclude: ScriptArg;
      version: ScriptArg;
      protocol: ScriptArg;
    };
  };
  /** tallyWorkers: the totals /status and /v1/capacity give of a page of one browser type's workers, counted inside Redis: only six numbers come back, not every worker's fields (at 10,000 workers /v1/capacity took ~200 ms when the proxy read them all; bench/scale.mjs). */
  tallyWorkers: {
    keys: { active: ScriptKey<K, 'activeConnections'> };
    args: { nowMs: ScriptArg; staleMs: ScriptArg; maxConcurrent: ScriptArg; refs: ScriptArg | readonly ScriptArg[] };
  };
  /** touchWorker: registers a worker, refreshes its heartbeat or changes its status, then files it in the indexes: every worker in workerIndex (scored by heartbeat), in freeIndex (in its version's band, scored by lifetime) only while it can take a session, and its major.minor in the type's versions while it is available. */
  touchWorker: {
    keys: {
      worker: ScriptKey<K, 'worker'>;
      active: ScriptKey<K, 'activeConnections'>;
      lifetime: ScriptKey<K, 'lifetimeConnections'>;
      workerIndex: ScriptKey<K, 'workerIndex'>;
      freeIndex: ScriptKey<K, 'freeIndex'>;
      versions: ScriptKey<K, 'versions'>;
    };
    args: {
      ref: ScriptArg;
      nowMs: ScriptArg;
      staleMs: ScriptArg;
      maxConcurrent: ScriptArg;
      maxLifetime: ScriptArg;
      ttl: ScriptArg;
      fields: ScriptArg | readonly ScriptArg[];
    };
  };
}
