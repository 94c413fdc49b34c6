// Generated from the headers of lua/*.lua by writeScriptTypes (coord's core/script-types.ts): do not edit.
// Regenerate after changing a header; a call naming a slot a header does not declare then fails tsc.
import type { ScriptArg, ScriptKey } from 'coordkit/plugin';
import type { contract } from './contract.ts';

type K = (typeof contract)['keys'];

export interface Scripts {
  /** touchMember: writes a member's record with a fresh TTL and scores it in the index, in one step so the two never disagree. */
  touchMember: {
    keys: { member: ScriptKey<K, 'member'>; members: ScriptKey<K, 'members'> };
    args: { memberId: ScriptArg; nowMs: ScriptArg; ttl: ScriptArg };
  };
}
