// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from 'coordkit/plugin';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface CronScripts {
  /** claimTick: hands the oldest queued tick to one runner under a lease. */
  claimTick: {
    keys: { due: ScriptKey<K, 'due'>; running: ScriptKey<K, 'running'>; runs: ScriptKey<K, 'runs'> };
    args: { runner: ScriptArg; nowMs: ScriptArg; nowS: ScriptArg; leaseGrace: ScriptArg; historyLength: ScriptArg };
  };
  /** finishTick: records how a run ended and gives its lease back. */
  finishTick: {
    keys: { job: ScriptKey<K, 'job'>; lease: ScriptKey<K, 'lease'>; running: ScriptKey<K, 'running'>; runs: ScriptKey<K, 'runs'> };
    args: {
      jobId: ScriptArg;
      tick: ScriptArg;
      runner: ScriptArg;
      status: ScriptArg;
      exitCode: ScriptArg;
      startedAt: ScriptArg;
      finishedAt: ScriptArg;
      historyLength: ScriptArg;
    };
  };
  /** scheduleTick: defines a job and queues its tick, unless a scheduler already queued this tick or a later one. */
  scheduleTick: {
    keys: { jobs: ScriptKey<K, 'jobs'>; job: ScriptKey<K, 'job'>; due: ScriptKey<K, 'due'> };
    args: { jobId: ScriptArg; tick: ScriptArg; nowMs: ScriptArg; every: ScriptArg; command: ScriptArg; timeout: ScriptArg };
  };
  /** sweepLeases: records as lost the claimed ticks whose lease expired before their run finished (the runner died or hung). */
  sweepLeases: {
    keys: { running: ScriptKey<K, 'running'>; runs: ScriptKey<K, 'runs'> };
    args: { nowS: ScriptArg; limit: ScriptArg; historyLength: ScriptArg };
  };
}
