// The keyspace of __NAME__, declared once. Key builders (ctx.keys), the Lua
// headers, `coord schema`, the conformance suite and `coord inspect` all read
// this declaration: no key name is spelled anywhere else.
import { defineContract } from 'coordkit/plugin';

export const contract = defineContract({
  plugin: '__NAME__',
  keys: {
    member: {
      pattern: 'member:{memberId}',
      type: 'hash',
      description: 'One running member: written when it starts, refreshed every heartbeat, deleted when it stops; expires if it dies.',
      ttl: 'required',
      writers: ['member'],
      fields: {
        startedAt: { type: 'integer', minimum: 0, description: 'ms since the epoch' },
        beatAt: { type: 'integer', minimum: 0, description: 'ms since the epoch' },
      },
      required: ['startedAt', 'beatAt'],
    },
    members: {
      pattern: 'members',
      type: 'zset',
      description: 'Every member by its last heartbeat (ms): lists them without SCAN.',
      ttl: 'none',
      writers: ['member'],
      member: { type: 'string', minLength: 1 },
      score: { type: 'integer', minimum: 0 },
    },
  },
});

export type Keys = typeof contract.keys;
