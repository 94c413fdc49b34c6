// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from '../../entries/plugin.ts';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface ObnizScripts {
  /** assignDevices: writes an assignment the caller planned (scripts.ts: the least-loaded alive slave per device, obniz-app-sdk's rule, from the list lengths it read). */
  assignDevices: {
    keys: {
      deviceIndex: ScriptKey<K, 'deviceIndex'>;
      listStamps: ScriptKey<K, 'listStamps'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      uninstalls: ScriptKey<K, 'uninstalls'>;
      coordSlaves: ScriptKey<K, 'coordSlaves'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; devices: ScriptArg | readonly ScriptArg[] };
  };
  /** claimDevices: a slave asks to start workers. */
  claimDevices: {
    keys: {
      claims: ScriptKey<K, 'claims'>;
      workers: ScriptKey<K, 'workers'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      deviceIndex: ScriptKey<K, 'deviceIndex'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; name: ScriptArg; obnizIds: ScriptArg | readonly ScriptArg[] };
  };
  /** forgetSlave: a dead slave (heartbeat missing, or older than deadAfter) whose list is empty (its devices moved by moveDevices) leaves: its list, heartbeat, index entry, coord-slave mark and change stamp are deleted, as obniz-app-sdk deletes a dead slave's keys. */
  forgetSlave: {
    keys: {
      slaveIndex: ScriptKey<K, 'slaveIndex'>;
      workers: ScriptKey<K, 'workers'>;
      heartbeat: ScriptKey<K, 'slaveHeartbeat'>;
      coordSlaves: ScriptKey<K, 'coordSlaves'>;
      listStamps: ScriptKey<K, 'listStamps'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; name: ScriptArg };
  };
  /** moveDevices: moves the caller planned (relocate.ts: the dead-slave relocation, a single relocation, doAllRelocate), each device from one slave's list to another's with instanceName and updatedMillisecond rewritten (the install is kept byte for byte). */
  moveDevices: {
    keys: {
      deviceIndex: ScriptKey<K, 'deviceIndex'>;
      listStamps: ScriptKey<K, 'listStamps'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      coordSlaves: ScriptKey<K, 'coordSlaves'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; fromMustBeDead: ScriptArg; moves: ScriptArg | readonly ScriptArg[] };
  };
  /** releaseDevices: a slave gives back the claims of workers it has stopped (onEnd done), so the slave that has the devices now may start them. */
  releaseDevices: {
    keys: { claims: ScriptKey<K, 'claims'> };
    args: { name: ScriptArg; obnizIds: ScriptArg | readonly ScriptArg[] };
  };
  /** removeDevices: devices gone from the list leave their slave's distribution list. */
  removeDevices: {
    keys: {
      deviceIndex: ScriptKey<K, 'deviceIndex'>;
      listStamps: ScriptKey<K, 'listStamps'>;
      claims: ScriptKey<K, 'claims'>;
      newInstalls: ScriptKey<K, 'newInstalls'>;
      uninstalls: ScriptKey<K, 'uninstalls'>;
    };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; devices: ScriptArg | readonly ScriptArg[] };
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
    keys: { deviceIndex: ScriptKey<K, 'deviceIndex'>; listStamps: ScriptKey<K, 'listStamps'> };
    args: { slaveTail: ScriptArg; nowMs: ScriptArg; deadAfterMs: ScriptArg; aliveSlave: ScriptArg; devices: ScriptArg | readonly ScriptArg[] };
  };
}
