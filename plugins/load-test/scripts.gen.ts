// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from '../../entries/plugin.ts';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface LoadTestScripts {
  /** addUsers: assigns users round-robin over the alive-worker snapshot and queues an add_user command on each chosen worker's command stream, in one step, so an assignment never exists without its command (or the reverse). */
  addUsers: {
    keys: { users: ScriptKey<K, 'users'>; cursor: ScriptKey<K, 'cursor'>; state: ScriptKey<K, 'testState'>; epoch: ScriptKey<K, 'testEpoch'> };
    args: {
      usersTail: ScriptArg;
      commandsTail: ScriptArg;
      expectEpoch: ScriptArg;
      now: ScriptArg;
      commandId: ScriptArg;
      cap: ScriptArg;
      count: ScriptArg;
      ids: ScriptArg;
      target: ScriptArg;
      workers: ScriptArg | readonly ScriptArg[];
    };
  };
  /** beginTest: starts a test in one step: IDLE → PREPARING with the epoch bumped and the orchestrator's lease taken, so no other orchestrator (or a second start on the same one) ever sees a PREPARING test without its lease and takes it for abandoned. */
  beginTest: {
    keys: { state: ScriptKey<K, 'testState'>; epoch: ScriptKey<K, 'testEpoch'>; lease: ScriptKey<K, 'orchestrator'>; generation: ScriptKey<K, 'generation'> };
    args: { owner: ScriptArg; leaseSeconds: ScriptArg; newGeneration: ScriptArg };
  };
  /** broadcast: queues one command (start_test, stop_test) on the command streams of the given workers, only while the caller's epoch is the current one. */
  broadcast: {
    keys: { epoch: ScriptKey<K, 'testEpoch'>; commands: ScriptKey<K, 'workerCommands'> | readonly ScriptKey<K, 'workerCommands'>[] };
    args: {
      expectEpoch: ScriptArg;
      type: ScriptArg;
      payload: ScriptArg;
      commandId: ScriptArg;
      now: ScriptArg;
      cap: ScriptArg;
      workers: ScriptArg | readonly ScriptArg[];
    };
  };
  /** dropWorker: takes a dead worker out of the snapshot: marks it dead, forgets its command stream and sets, and returns its users for reassignment. */
  dropWorker: {
    keys: {
      workers: ScriptKey<K, 'workers'>;
      status: ScriptKey<K, 'workerStatus'>;
      users: ScriptKey<K, 'workerUsers'>;
      active: ScriptKey<K, 'workerActiveUsers'>;
      commands: ScriptKey<K, 'workerCommands'>;
      ack: ScriptKey<K, 'workerAck'>;
    };
    args: { workerId: ScriptArg; now: ScriptArg; keepSeconds: ScriptArg };
  };
  /** endTest: a test's last step: its state (STOPPING, or PREPARING when the start failed) goes to IDLE and its orchestrator gives the lease back, in one step, only while the test is still the caller's (its epoch). */
  endTest: {
    keys: { state: ScriptKey<K, 'testState'>; epoch: ScriptKey<K, 'testEpoch'>; lease: ScriptKey<K, 'orchestrator'> };
    args: { from: ScriptArg; expectEpoch: ScriptArg; owner: ScriptArg };
  };
  /** markRunning: a worker records that its users' tasks run, a batch of users at once (a command batch's). */
  markRunning: {
    keys: { active: ScriptKey<K, 'workerActiveUsers'>; users: ScriptKey<K, 'user'> | readonly ScriptKey<K, 'user'>[] };
    args: { workerId: ScriptArg; now: ScriptArg; userIds: ScriptArg | readonly ScriptArg[] };
  };
  /** removeUsers: unassigns the users with the highest ids (so ids stay dense) and queues a remove_user command on each one's worker, in one step. */
  removeUsers: {
    keys: { users: ScriptKey<K, 'users'>; state: ScriptKey<K, 'testState'>; epoch: ScriptKey<K, 'testEpoch'> };
    args: {
      usersTail: ScriptArg;
      commandsTail: ScriptArg;
      expectEpoch: ScriptArg;
      now: ScriptArg;
      commandId: ScriptArg;
      cap: ScriptArg;
      count: ScriptArg;
      target: ScriptArg;
    };
  };
  /** syncPool: vikhry's lazy pool sync: puts the ids the orchestrator declared since the last sync into the available set and moves the watermark, once, however many workers call it at the same time. */
  syncPool: {
    keys: { resources: ScriptKey<K, 'resources'>; available: ScriptKey<K, 'resourceAvailable'>; loaded: ScriptKey<K, 'resourceLoaded'> };
    args: { name: ScriptArg };
  };
  /** transitionState: compare-and-set of the test's lifecycle state. */
  transitionState: {
    keys: { state: ScriptKey<K, 'testState'>; epoch: ScriptKey<K, 'testEpoch'> };
    args: { from: ScriptArg; to: ScriptArg; bump: ScriptArg; expectEpoch: ScriptArg };
  };
}
