// Slot IDs name their orchestrator ('<orchestratorId>:<n>'), so whoever frees
// a slot (node, manager, gc) knows whose slots.reclaimed it goes back to.

export function slotId(orchestratorId: string, n: number): string {
  return `${orchestratorId}:${n}`;
}

/** The orchestrator a slot belongs to, or undefined for text that is not a slot ID. */
export function slotOwner(slot: string): string | undefined {
  return /^(.+):\d+$/.exec(slot)?.[1];
}
