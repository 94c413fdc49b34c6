// Slaves stopping cleanly give their devices to the alive slaves at once rather
// than after their heartbeats expire: the heartbeats deleted, one plan for all
// of them (a process of 5,000 slaves reads the fleet once, not once a slave,
// and none of its slaves receives a sibling's devices), the moves written 50 a
// script call, then the slaves' keys deleted. The caller tells the receivers.
// The same for slaves found dead: relocateDeadSlaves.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { ObnizScriptError } from './errors.ts';
import { slaveStates } from './fleet.ts';
import { eachLimited } from './loop.ts';
import { LeastLoaded } from './plan.ts';
import { relocateSlave } from './relocate.ts';
import { forgetSlave, moveDevices, type Move } from './scripts.ts';

/** Slaves' keys deleted at the same time (one script call each). */
const FORGET_CONCURRENCY = 32;

/**
 * Hands the devices of the stopping slaves `names` (their workers stopped) to the
 * other alive slaves; returns how many moved. Throws ObnizScriptError
 * NO_ACCEPTABLE_WORKER when they hold devices and no other slave is alive (the
 * lists then wait for a manager's health check).
 */
export async function handOver(ctx: Ctx, names: readonly string[]): Promise<number> {
  await ctx.backend.pipeline(names.map((name): Command => ['DEL', ctx.keys.slaveHeartbeat({ name })]));
  return [...(await relocateDeadSlaves(ctx, names)).values()].reduce((sum, n) => sum + n, 0);
}

/**
 * The devices of the dead slaves `names` to the alive ones, planned in one read
 * of the fleet, then their keys deleted; returns how many moved from each. Each move is
 * checked again by its script (a slave that beat meanwhile keeps its devices).
 * relocateSlave does one slave and reads the fleet for it: a manager's health
 * check finding a dead process of 5,000 slaves would read it 5,000 times.
 */
export async function relocateDeadSlaves(ctx: Ctx, names: readonly string[]): Promise<Map<string, number>> {
  const leaving = new Set(names);
  const planner = new LeastLoaded((await slaveStates(ctx)).filter((s) => s.alive && !leaving.has(s.name)));
  const lists = await ctx.backend.pipeline(names.map((name): Command => ['HKEYS', ctx.keys.workers({ name })]));
  const moves: Move[] = names.flatMap((from, i) => {
    const ids = lists[i];
    if (ids instanceof Error) throw ids;
    return (ids as string[]).map((obnizId) => ({ obnizId, from, to: '' }));
  });
  const empty = names.filter((_name, i) => !(lists[i] as string[]).length);
  if (moves.length && !planner.size) {
    await eachLimited(empty, FORGET_CONCURRENCY, async (name) => void (await forgetSlave(ctx, name)));
    throw new ObnizScriptError('NO_ACCEPTABLE_WORKER', `relocating the devices of ${names.length === 1 ? `dead slave ${names[0]}` : `${names.length} dead slaves`}`);
  }
  for (const move of moves) move.to = planner.next()!;
  const moved = new Map(names.map((name) => [name, 0]));
  (await moveDevices(ctx, moves, true)).forEach((r, i) => {
    if (r.ok) moved.set(moves[i]!.from, moved.get(moves[i]!.from)! + 1);
  });
  await eachLimited(names, FORGET_CONCURRENCY, async (name) => {
    // busy: a device was listed on it meanwhile, or its new slave died before taking it: moved the one-slave way
    if ((await forgetSlave(ctx, name)) !== 'busy') return;
    const late = await relocateSlave(ctx, name);
    if (late !== 'alive') moved.set(name, moved.get(name)! + late.length);
  });
  return moved;
}
