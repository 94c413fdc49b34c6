// Conformance scenarios: drive the obniz scripts the way the roles do so the
// keyspace shows every key the plugin writes, in the SDK's formats.
import type { ConformanceScenario } from '../../entries/plugin.ts';
import type { ObnizConfig } from './config.ts';
import type { ObnizKeys } from './contract.ts';
import type { Ctx } from './context.ts';
import { relocateAll, relocateSlave } from './relocate.ts';
import { assignDevices, claimDevices, removeDevices, touchManager, touchSlave, updateDevices } from './scripts.ts';

const devices = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ id: `0000-${String(from + i).padStart(4, '0')}`, hardware: 'blewifi_gw2', configs: '{"interval":5}', tags: [] }));

export const scenarios: ConformanceScenario<ObnizConfig, ObnizKeys>[] = [
  {
    name: 'slaves and a manager beat, devices are assigned, changed, claimed, rebalanced and removed',
    expects: ['slaveHeartbeat', 'masterHeartbeat', 'workers', 'slaveIndex', 'coordSlaves', 'managerIndex', 'claims', 'newInstalls', 'uninstalls'],
    async run(ctx: Ctx) {
      await touchManager(ctx, 'manager-1');
      await touchSlave(ctx, 'slave-1');
      await assignDevices(ctx, devices(6));
      await touchSlave(ctx, 'slave-2');
      await updateDevices(ctx, [{ ...devices(1)[0]!, configs: '{"interval":10}' }]);
      await claimDevices(ctx, 'slave-1', devices(3).map((d) => d.id));
      await relocateAll(ctx);
      await assignDevices(ctx, devices(2, 6));
      await removeDevices(ctx, [devices(1)[0]!.id]);
    },
  },
  {
    name: 'a dead slave\'s devices move to the alive ones and its keys go',
    expects: ['slaveHeartbeat', 'workers', 'slaveIndex', 'coordSlaves'],
    async run(ctx: Ctx) {
      await touchSlave(ctx, 'slave-a');
      await touchSlave(ctx, 'slave-b');
      await assignDevices(ctx, devices(10));
      await ctx.backend.send(['DEL', ctx.keys.slaveHeartbeat({ name: 'slave-a' })]);
      await relocateSlave(ctx, 'slave-a');
    },
  },
];
