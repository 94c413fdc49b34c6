// The slave role. With `slaves: N` (over 1) one process runs N slaves, named
// {instanceName}-1 … {instanceName}-N, each with its own heartbeat, list,
// claims and workers as the documented key layout has them, all over the
// process's two Redis connections: commands, and one pub/sub connection that
// hears `synchronize` once for all of them (SlaveChannels). What every start
// checks is checked once (modules, names, stale claims); a stop hands all their
// devices to slaves outside the process in one plan and one `synchronize`.
import type { Role } from '../../../entries/plugin.ts';
import { instanceNameOf } from '../config.ts';
import type { Ctx } from '../context.ts';
import { eachLimited } from '../loop.ts';
import { SlaveChannels } from '../slave-channels.ts';
import { checkNamesAreFree, loadSlaveSetup, releaseStaleClaims } from '../slave-start.ts';
import { handOverAndTell, Slave } from './slave.ts';

/** One slave, or `slaves` of them sharing the process's connections. */
export function slaveRole(ctx: Ctx): Role {
  const role = ctx.config.slaves > 1 ? new SlaveHost(ctx) : new Slave(ctx);
  return { start: () => role.start(), stop: (reason) => role.stop(reason) };
}

/** Slaves joining (each subscribes, beats and syncs once) or halting at the same time. */
const CONCURRENCY = 64;

export class SlaveHost {
  readonly slaves: readonly Slave[];
  private readonly channels: SlaveChannels;

  constructor(private readonly ctx: Ctx) {
    const base = instanceNameOf(ctx.config);
    this.channels = new SlaveChannels(ctx.backend, ctx.global.redis.keyPrefix);
    this.slaves = Array.from({ length: ctx.config.slaves }, (_, i) => new Slave(ctx, { name: `${base}-${i + 1}`, channels: this.channels }));
  }

  get names(): string[] {
    return this.slaves.map((s) => s.name);
  }

  async start(): Promise<void> {
    const { ctx } = this;
    const setup = await loadSlaveSetup(ctx);
    await checkNamesAreFree(ctx, this.names);
    await releaseStaleClaims(ctx, this.names);
    const began = ctx.clock.now();
    try {
      await eachLimited(this.slaves, CONCURRENCY, (slave) => slave.join(setup));
    } catch (err) {
      await this.stop('failed to start').catch(() => {});
      throw err;
    }
    const workers = this.slaves.reduce((n, s) => n + s.size, 0);
    ctx.logger.info('slaves running', { slaves: this.slaves.length, from: this.names[0], to: this.names.at(-1), workers, ms: ctx.clock.now() - began });
  }

  async stop(reason: string): Promise<void> {
    // the connection closes first: stopping slaves act on no message, and none then unsubscribes on its own
    await this.channels.close();
    await eachLimited(this.slaves, CONCURRENCY, (slave) => slave.halt());
    await handOverAndTell(this.ctx, this.names, reason);
  }
}
