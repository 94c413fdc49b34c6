// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from '../../core/scripts.ts';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface ObnizScripts {
  /** assignDevices: obniz-app-sdk's assignment for a batch of devices. */
  assignDevices: {
    keys: {
      slaveIndex: ScriptKey<K, 'slaveIndex'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      uninstalls: ScriptKey<K, 'uninstalls'>;
      coordSlaves: ScriptKey<K, 'coordSlaves'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; devices: ScriptArg | readonly ScriptArg[] };
  };
  /** claimDevices: a slave asks to start workers. */
  claimDevices: {
    keys: { claims: ScriptKey<K, 'claims'>; workers: ScriptKey<K, 'workers'>; newInstalls: ScriptKey<K, 'newInstalls'> };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; name: ScriptArg; obnizIds: ScriptArg | readonly ScriptArg[] };
  };
  /** releaseDevices: a slave gives back the claims of workers it has stopped (onEnd done), so the slave that has the devices now may start them. */
  releaseDevices: {
    keys: { claims: ScriptKey<K, 'claims'> };
    args: { name: ScriptArg; obnizIds: ScriptArg | readonly ScriptArg[] };
  };
  /** relocateAll: doAllRelocate, made exact: with T devices on n alive slaves, every slave ends with floor(T/n) or floor(T/n)+1, the +1 going to the slaves that hold the most now, so the fewest devices move (obniz-app-sdk's loop can stop short of that). */
  relocateAll: {
    keys: { slaveIndex: ScriptKey<K, 'slaveIndex'>; newInstalls: ScriptKey<K, 'newInstalls'>; coordSlaves: ScriptKey<K, 'coordSlaves'> };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg };
  };
  /** relocateDevice: obniz-app-sdk's relocation of one device, checked in its order: no alive slave: NO_ACCEPTABLE_WORKER; in no list: NOT_INSTALLED; its slave alive and the move not forced: NO_NEED_TO_RELOCATE; no other alive slave: NO_OTHER_ACCEPTABLE_WORKER; else it moves to the least-loaded other alive slave with instanceName and updatedMillisecond rewritten (the install is kept byte for byte). */
  relocateDevice: {
    keys: { slaveIndex: ScriptKey<K, 'slaveIndex'>; newInstalls: ScriptKey<K, 'newInstalls'>; coordSlaves: ScriptKey<K, 'coordSlaves'> };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; obnizId: ScriptArg; force: ScriptArg };
  };
  /** relocateSlave: a slave found dead (heartbeat missing, or older than deadAfter) gives all its devices to the alive slaves, each to the least loaded at that moment; then its list, heartbeat, index entry and coord-slave mark are deleted. */
  relocateSlave: {
    keys: {
      slaveIndex: ScriptKey<K, 'slaveIndex'>;
      workers: ScriptKey<K, 'workers'>;
      heartbeat: ScriptKey<K, 'slaveHeartbeat'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      coordSlaves: ScriptKey<K, 'coordSlaves'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; name: ScriptArg };
  };
  /** removeDevices: devices gone from the list leave their slave's distribution list. */
  removeDevices: {
    keys: {
      slaveIndex: ScriptKey<K, 'slaveIndex'>;
      claims: ScriptKey<K, 'claims'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      uninstalls: ScriptKey<K, 'uninstalls'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; obnizIds: ScriptArg | readonly ScriptArg[] };
  };
  /** touchManager: a manager's heartbeat, and how many other managers were alive before it (0 on the first call: isFirstManager). */
  touchManager: {
    keys: { heartbeat: ScriptKey<K, 'masterHeartbeat'>; managerIndex: ScriptKey<K, 'managerIndex'> };
    args: { masterTail: ScriptArg; name: ScriptArg; nowMs: ScriptArg; ttlMs: ScriptArg; deadAfterMs: ScriptArg };
  };
  /** touchSlave: a slave's heartbeat: obniz-app-sdk's key (Date.now() in ms, with a TTL), coord's slave index, which the scripts read instead of KEYS slave:*:heartbeat, and the coord-slave set. */
  touchSlave: {
    keys: { heartbeat: ScriptKey<K, 'slaveHeartbeat'>; slaveIndex: ScriptKey<K, 'slaveIndex'>; coordSlaves: ScriptKey<K, 'coordSlaves'> };
    args: { slaveTail: ScriptArg; name: ScriptArg; nowMs: ScriptArg; ttlMs: ScriptArg; staleBeforeMs: ScriptArg };
  };
  /** updateDevices: a device's install (its configs…) changed: its entry gets the new install and stays on the same slave, which restarts the worker at its next sync. */
  updateDevices: {
    keys: { slaveIndex: ScriptKey<K, 'slaveIndex'> };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; devices: ScriptArg | readonly ScriptArg[] };
  };
}
