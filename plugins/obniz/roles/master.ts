// The master: a manager and a slave in one process (obniz-app-sdk's Master),
// what `coord run --plugin obniz` starts. The slave starts first so the
// manager's first sync finds it; stopping goes the other way round.
import type { Role } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';
import { Manager } from './manager.ts';
import { Slave } from './slave.ts';

export function masterRole(ctx: Ctx): Role & { manager: Manager; slave: Slave } {
  const slave = new Slave(ctx);
  const manager = new Manager(ctx);
  return {
    manager,
    slave,
    async start() {
      await slave.start();
      try {
        await manager.start();
      } catch (err) {
        await slave.stop('the manager failed to start');
        throw err;
      }
    },
    async stop(reason) {
      await manager.stop();
      await slave.stop(reason);
    },
  };
}
