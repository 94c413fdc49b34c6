// Some scripts find an ID inside Redis (the orchestrator named in a slot ID, a
// session named in slots.held) and build that ID's keys as head + ID + tail.
// The registry passes the head (`@head entry`); the tail comes from the same
// contract pattern, here, so no script spells a key.
import { contract } from './contract.ts';
import { ContractError } from '../../entries/plugin.ts';

type Entry = keyof typeof contract.keys;

/** What follows the one parameter of a key's pattern: 'orchestrator:{orchestratorId}:slots.held' → ':slots.held'. */
export function keyTail(entry: Entry): string {
  const pattern = contract.keys[entry].pattern;
  const close = pattern.indexOf('}');
  if (close === -1 || pattern.indexOf('{', close) !== -1) throw new ContractError(`key ${entry} (${pattern}) is not one parameter between a head and a tail`);
  return pattern.slice(close + 1);
}
