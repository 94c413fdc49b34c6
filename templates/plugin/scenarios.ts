// Conformance scenarios: drive the plugin the way its roles do so the keyspace
// shows every key it writes; the suite holds each key to the contract.
import type { ConformanceScenario } from 'coordkit/plugin';
import type { Config } from './config.ts';
import type { Keys } from './contract.ts';
import { touchMember } from './roles/member.ts';

export const scenarios: ConformanceScenario<Config, Keys>[] = [
  {
    name: 'two members register and heartbeat',
    expects: ['member', 'members'],
    async run(ctx) {
      await touchMember(ctx, 'm1');
      await touchMember(ctx, 'm2');
      await touchMember(ctx, 'm1');
    },
  },
];
