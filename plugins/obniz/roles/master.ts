// The master: a manager and a slave in one process (obniz-app-sdk's Master),
// what `coord run --plugin obniz` starts; with `slaves: N`, N slaves. The
// slaves start first so the manager's first sync finds them; stopping goes the
// other way round.
import type { Role } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';
import { Manager } from './manager.ts';
import { Slave } from './slave.ts';
import { SlaveHost } from './slave-host.ts';

export function masterRole(ctx: Ctx): Role & { manager: Manager; slave: Slave | SlaveHost } {
  const slave = ctx.config.slaves > 1 ? new SlaveHost(ctx) : new Slave(ctx);
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
