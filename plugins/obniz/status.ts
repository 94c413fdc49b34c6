// What `coord obniz status` shows, read straight from Redis without writing:
// every slave (indexed or found by SCAN) that has a heartbeat or devices,
// the workers coord slaves run (their claims), and the managers.
import type { Command } from '../../entries/plugin.ts';
import { scanNames } from './discover.ts';
import { slaveStates } from './fleet.ts';
import { toMs } from './values.ts';
import type { Ctx } from './context.ts';

export interface ObnizStatus {
  slaves: { name: string; alive: boolean; heartbeatAgeMs: number | null; devices: number; running: number }[];
  managers: { name: string; alive: boolean; heartbeatAgeMs: number | null }[];
  devices: number;
  /** Devices whose worker runs on a coord slave right now (claims). */
  running: number;
}

export async function obnizStatus(ctx: Ctx): Promise<ObnizStatus> {
  const now = ctx.clock.now();
  const deadAfterMs = ctx.config.deadAfter * 1000;
  const [slaveIndex, managerIndex] = (await ctx.backend.pipeline([
    ['ZRANGE', ctx.keys.slaveIndex(), 0, -1],
    ['ZRANGE', ctx.keys.managerIndex(), 0, -1],
  ])) as string[][];
  const scanned = ctx.config.discover ? await scanNames(ctx) : { slaves: [], managers: [] };
  const slaveNames = [...new Set([...(slaveIndex ?? []), ...scanned.slaves])].sort();
  const managerNames = [...new Set([...(managerIndex ?? []), ...scanned.managers])].sort();

  const claims = (await ctx.backend.send(['HGETALL', ctx.keys.claims()])) as string[];
  const running = new Map<string, number>();
  for (let i = 1; i < claims.length; i += 2) running.set(claims[i]!, (running.get(claims[i]!) ?? 0) + 1);

  // A slave with neither a heartbeat nor a list is gone, as obniz-app-sdk sees it (a Redis hash is never empty).
  const slaves = (await slaveStates(ctx, slaveNames)).filter((s) => s.heartbeatMs !== null || s.devices > 0).map((s) => ({
    name: s.name,
    alive: s.alive,
    heartbeatAgeMs: s.heartbeatMs === null ? null : now - s.heartbeatMs,
    devices: s.devices,
    running: running.get(s.name) ?? 0,
  }));
  const beats = await ctx.backend.pipeline(managerNames.map((name): Command => ['GET', ctx.keys.masterHeartbeat({ name })]));
  const managers = managerNames.map((name, i) => {
    const ms = typeof beats[i] === 'string' ? toMs(beats[i]) : NaN;
    return { name, alive: !Number.isNaN(ms) && ms + deadAfterMs >= now, heartbeatAgeMs: Number.isNaN(ms) ? null : now - ms };
  });
  return { slaves, managers, devices: slaves.reduce((n, s) => n + s.devices, 0), running: claims.length / 2 };
}
