// What a process checks before its slaves join, once for all of them however
// many it runs: the worker module and device class load, the instance names
// are free, and claims left under those names by an earlier process go back.
// The claims are found by one HSCAN pass over obniz:claims: done per slave, a
// process of 500 slaves over a fleet of 200,000 claims walked them 500 times
// (119 s to start 500 slaves).
import { type Command, ConfigError, ModuleLoadError, UsageError } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { loadDeviceClass, type DeviceClass } from './device-class.ts';
import { InstanceError } from './errors.ts';
import { importUserModule } from './load-module.ts';
import { releaseDevices } from './scripts.ts';
import { toMs } from './values.ts';
import { workerFactory, type WorkerFactory } from './worker-host.ts';

/** What every slave of a process runs its workers with. */
export interface SlaveSetup {
  create: WorkerFactory;
  deviceClass?: DeviceClass;
}

/** Loads the worker module and the device class; a module of the user's that cannot be used is a UsageError (exit 2). */
export async function loadSlaveSetup(ctx: Ctx): Promise<SlaveSetup> {
  const { worker } = ctx.config;
  if (!worker) throw new ConfigError('obniz.worker is not set: a slave needs a worker module (--set obniz.worker=./my-worker.js, or OBNIZ_WORKER)', { code: 'COORD_ERR_OBNIZ_WORKER_UNSET' });
  try {
    return { create: workerFactory(await importUserModule(worker, 'worker'), worker), deviceClass: await loadDeviceClass(ctx.config, ctx.logger) };
  } catch (err) {
    // a module of the user's that cannot be used: theirs to fix, like a plugin that will not load (exit 2)
    throw err instanceof ModuleLoadError ? new UsageError(err.message, { code: err.code, cause: err }) : err;
  }
}

/** Throws when a slave of one of these names wrote its heartbeat less than heartbeatTtl ago. */
export async function checkNamesAreFree(ctx: Ctx, names: readonly string[]): Promise<void> {
  const beats = await ctx.backend.pipeline(names.map((name): Command => ['GET', ctx.keys.slaveHeartbeat({ name })]));
  const now = ctx.clock.now();
  names.forEach((name, i) => {
    const beat = beats[i];
    const age = typeof beat === 'string' ? now - toMs(beat) : NaN;
    if (age < ctx.config.heartbeatTtl * 1000) {
      throw new InstanceError(
        `instance name "${name}" is taken: a slave of that name wrote its heartbeat ${(age / 1000).toFixed(1)} s ago ` +
          `(give each process its own obniz.instanceName, or wait ${ctx.config.heartbeatTtl} s after the old one stopped)`,
        { code: 'COORD_ERR_OBNIZ_NAME_TAKEN' },
      );
    }
  });
}

/** A fresh process runs no worker: claims left under its slaves' names by an earlier process go back (one pass for all). */
export async function releaseStaleClaims(ctx: Ctx, names: readonly string[]): Promise<void> {
  const ours = new Set(names);
  const stale = new Map<string, string[]>();
  let cursor = '0';
  do {
    const [next, flat] = (await ctx.backend.send(['HSCAN', ctx.keys.claims(), cursor, 'COUNT', 1000])) as [string, string[]];
    for (let i = 0; i < flat.length; i += 2) {
      const holder = flat[i + 1]!;
      if (!ours.has(holder)) continue;
      const ids = stale.get(holder) ?? [];
      ids.push(flat[i]!);
      stale.set(holder, ids);
    }
    cursor = next;
  } while (cursor !== '0');
  for (const [name, ids] of stale) {
    await releaseDevices(ctx, name, ids);
    ctx.logger.info('gave back claims of an earlier process of the same name', { instanceName: name, devices: ids.length });
  }
}
