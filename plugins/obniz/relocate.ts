// Moving devices between slaves, as obniz-app-sdk does it: one device
// (relocate), a dead slave's devices (the health check, a clean stop), every
// device to balance the alive slaves (doAllRelocate). Planned here from the
// fleet as read; written by moveDevices and forgetSlave (scripts.ts), which
// check each move again, so a slave that came back in time keeps its devices.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { ObnizScriptError, type ObnizErrorCode } from './errors.ts';
import { findDevice, slaveStates } from './fleet.ts';
import { LeastLoaded } from './plan.ts';
import { forgetSlave, moveDevices, REPLANS, type Move } from './scripts.ts';

/** obniz-app-sdk's relocation of one device; throws ObnizScriptError with obniz-app-sdk's codes, in its order. */
export async function relocateDevice(ctx: Ctx, obnizId: string, force = false): Promise<{ from: string; to: string }> {
  const fail = (code: ObnizErrorCode, hint?: string) => new ObnizScriptError(code, `relocating ${obnizId}`, hint);
  for (let round = 0; round <= REPLANS; round++) {
    const states = await slaveStates(ctx);
    if (!states.some((s) => s.alive)) throw fail('NO_ACCEPTABLE_WORKER');
    const owner = await findDevice(ctx, obnizId, states.map((s) => s.name));
    if (!owner) throw fail('NOT_INSTALLED');
    const notMoving = (name: string) => fail('NO_NEED_TO_RELOCATE', `its slave ${name} is alive; add --force to move it anyway`);
    if (!force && states.find((s) => s.name === owner)?.alive) throw notMoving(owner);
    const to = new LeastLoaded(states.filter((s) => s.alive && s.name !== owner)).next();
    if (!to) throw fail('NO_OTHER_ACCEPTABLE_WORKER');
    const [result] = await moveDevices(ctx, [{ obnizId, from: owner, to }], !force);
    if (result!.ok) return { from: owner, to };
    if (result!.detail === 'ALIVE') throw notMoving(owner);
    // NOT_INSTALLED: it moved meanwhile; NOT_ALIVE: its new slave died: look again
  }
  throw fail('NO_OTHER_ACCEPTABLE_WORKER');
}

/**
 * A dead slave's devices go to the alive slaves (each to the least loaded), then
 * its keys are deleted; 'alive' when it is alive (checked again by the scripts,
 * so a slave that came back in time keeps what has not moved yet).
 */
export async function relocateSlave(ctx: Ctx, name: string): Promise<'alive' | { obnizId: string; to: string }[]> {
  const moved: { obnizId: string; to: string }[] = [];
  for (let round = 0; round <= REPLANS; round++) {
    const states = await slaveStates(ctx);
    const [self] = states.some((s) => s.name === name) ? states.filter((s) => s.name === name) : await slaveStates(ctx, [name]);
    if (self!.alive) return moved.length ? moved : 'alive';
    const ids = (await ctx.backend.send(['HKEYS', ctx.keys.workers({ name })])) as string[];
    if (ids.length) {
      const planner = new LeastLoaded(states.filter((s) => s.alive && s.name !== name));
      if (!planner.size) throw new ObnizScriptError('NO_ACCEPTABLE_WORKER', `relocating the devices of dead slave ${name}`);
      const results = await moveDevices(ctx, ids.map((obnizId) => ({ obnizId, from: name, to: planner.next()! })), true);
      for (const r of results) if (r.ok) moved.push({ obnizId: r.obnizId, to: r.detail });
      if (results.some((r) => r.detail === 'ALIVE')) return moved.length ? moved : 'alive';
    }
    const left = await forgetSlave(ctx, name);
    if (left === 'gone') return moved;
    if (left === 'alive') return moved.length ? moved : 'alive';
    // busy: devices were listed on it meanwhile (or a new slave died before taking one): once more
  }
  return moved;
}

/**
 * doAllRelocate, made exact: with T devices on n alive slaves, every slave ends
 * with floor(T/n) or floor(T/n)+1, the +1 going to the slaves that hold the most
 * now, so the fewest devices move (obniz-app-sdk's loop can stop short of that).
 * Devices of dead slaves are left to the health check.
 */
export async function relocateAll(ctx: Ctx): Promise<{ moved: number; counts: Record<string, number> }> {
  const slaves = (await slaveStates(ctx)).filter((s) => s.alive).map((s) => ({ name: s.name, count: s.devices, target: 0 }));
  if (!slaves.length) throw new ObnizScriptError('NO_WORKER', 'relocating all devices');
  slaves.sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1));
  const total = slaves.reduce((n, s) => n + s.count, 0);
  const base = Math.floor(total / slaves.length);
  slaves.forEach((s, i) => (s.target = base + (i < total - base * slaves.length ? 1 : 0)));
  const givers = slaves.filter((s) => s.count > s.target);
  const takers = slaves.filter((s) => s.count < s.target).flatMap((s) => Array<string>(s.target - s.count).fill(s.name));
  const ids = await ctx.backend.pipeline(givers.map((g): Command => ['HKEYS', ctx.keys.workers({ name: g.name })]));
  const moves: Move[] = givers.flatMap((g, i) => (ids[i] as string[]).slice(0, g.count - g.target).map((obnizId) => ({ obnizId, from: g.name, to: '' })));
  moves.forEach((m, i) => (m.to = takers[i]!));
  const results = await moveDevices(ctx, moves.filter((m) => m.to));
  const counts = Object.fromEntries(slaves.map((s) => [s.name, s.count]));
  results.forEach((r, i) => {
    if (!r.ok) return;
    counts[moves[i]!.from]! -= 1;
    counts[moves[i]!.to]! += 1;
  });
  return { moved: results.filter((r) => r.ok).length, counts: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1))) };
}
