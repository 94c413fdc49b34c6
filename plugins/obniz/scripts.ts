// The obniz plugin's one caller of its Lua scripts (lua/*.lua, typed by the
// generated scripts.gen.ts): a named, typed function per script, with its keys
// and arguments built here and its reply turned into a typed result. No other
// file calls ctx.scripts. The work that grows with the fleet (which slave
// takes which device) is planned by the callers and here; scripts only check
// and write a plan, a bounded batch at a time, so one call stays short (Redis
// runs one script at a time, and may be shared with a browser grid, a queue…).
import type { Ctx } from './context.ts';
import { contract } from './contract.ts';
import { slaveStates, timing, type SlaveState } from './fleet.ts';
import { LeastLoaded } from './plan.ts';
import { toDeviceList, type DeviceTexts } from './device-list.ts';
import type { DeviceInfo } from './values.ts';

/** Per-device outcome of a batch script. */
export interface DeviceResult {
  obnizId: string;
  ok: boolean;
  /** The slave on success, the error code otherwise. */
  detail: string;
}

/**
 * Devices per script call, so each call's work stays well under 2 ms with 500
 * slaves (Redis runs one script at a time): each script does a few O(1)
 * commands a device and none per slave of the fleet. bench/obniz.mjs times
 * every call with SLOWLOG: at 100 a call p99.9 was 1.8 ms, at 50 it is 0.9–1.4
 * ms, for 15% more time in a 100,000-device first sync.
 */
const BATCH = { assign: 50, update: 50, remove: 50, move: 50, claim: 50, release: 500 } as const;

/**
 * assignDevices calls sent before the first one's answer: the manager prepares the next batch
 * while Redis runs one, rather than each call waiting a round trip (0.8 ms, of which 0.3 ms in
 * Redis). Each call stays as short; Redis still runs one at a time, between other clients' commands.
 */
const ASSIGNS_IN_FLIGHT = 4;

/** The keys of the batch scripts (all fixed: the lists are reached through @head workers). */
const scriptKeys = {
  assign: { deviceIndex: {}, listStamps: {}, newInstalls: {}, uninstalls: {}, coordSlaves: {} },
  update: { deviceIndex: {}, listStamps: {} },
  remove: { deviceIndex: {}, listStamps: {}, claims: {}, newInstalls: {}, uninstalls: {} },
  move: { deviceIndex: {}, listStamps: {}, newInstalls: {}, coordSlaves: {} },
} as const;

/** Runs `plan` through `run` BATCH items at a time; the flat replies as DeviceResults, in order. */
async function inBatches(plan: readonly (readonly string[])[], size: number, run: (batch: readonly (readonly string[])[]) => Promise<unknown>): Promise<DeviceResult[]> {
  const out: DeviceResult[] = [];
  for (let i = 0; i < plan.length; i += size) out.push(...triples(await run(plan.slice(i, i + size))));
  return out;
}

/** What follows the name in a heartbeat key (':heartbeat'), for scripts that derive heartbeat keys. */
const tail = (pattern: string) => pattern.slice(pattern.indexOf('}') + 1);
const slaveTail = tail(contract.keys.slaveHeartbeat.pattern);
const masterTail = tail(contract.keys.masterHeartbeat.pattern);

/** Writes a slave heartbeat; returns how many index members it dropped as gone. */
export async function touchSlave(ctx: Ctx, name: string): Promise<number> {
  const { nowMs, deadAfterMs } = timing(ctx);
  return (await ctx.scripts.run('touchSlave', {
    keys: { heartbeat: { name }, slaveIndex: {}, coordSlaves: {} },
    args: { slaveTail, name, nowMs, ttlMs: Math.round(ctx.config.heartbeatTtl * 1000), staleBeforeMs: nowMs - deadAfterMs },
  })) as number;
}

/** Writes a manager heartbeat; returns how many other managers are alive. */
export async function touchManager(ctx: Ctx, name: string): Promise<number> {
  return (await ctx.scripts.run('touchManager', {
    keys: { heartbeat: { name }, managerIndex: {} },
    args: { masterTail, name, ...timing(ctx), ttlMs: Math.round(ctx.config.heartbeatTtl * 1000) },
  })) as number;
}

/** One device's move: from the slave whose list holds it to another. */
export interface Move {
  obnizId: string;
  from: string;
  to: string;
}

/** A planned device whose slave died between the plan and its script: planned again, up to this many times. */
export const REPLANS = 3;

/**
 * obniz-app-sdk's assignment: each device to the alive slave with the fewest
 * devices (ties: the first by name). Planned here from the list lengths, written
 * in batches by assignDevices.lua, which checks each device in O(1). `prefer`
 * (obnizId → slave) sends a device back to the slave it was on when that slave
 * is alive: after Redis restarted empty, a device keeps running where it ran.
 */
export async function assignDevices(ctx: Ctx, devices: readonly DeviceInfo[] | DeviceTexts, prefer?: ReadonlyMap<string, string>): Promise<DeviceResult[]> {
  const list = asTexts(devices);
  const results: DeviceResult[] = new Array(list.ids.length);
  await assignEach(ctx, list, (i, ok, detail) => (results[i] = { obnizId: list.ids[i]!, ok, detail }), { prefer });
  return results;
}

/**
 * assignDevices with no result object a device (a million at the first sync): `onResult(i, ok, detail)`
 * for each device i. `unique`: the ids are known distinct (a checked list), so no set of them is built
 * to find one listed twice.
 */
export async function assignEach(
  ctx: Ctx,
  { ids, texts }: DeviceTexts,
  onResult: (i: number, ok: boolean, detail: string) => void,
  {
    prefer,
    unique = false,
    states = slaveStates,
  }: { prefer?: ReadonlyMap<string, string>; unique?: boolean; states?: (ctx: Ctx) => Promise<SlaveState[]> } = {},
): Promise<void> {
  let todo: number[] = [];
  if (unique) todo = Array.from(ids, (_, i) => i);
  else {
    const seen = new Set<string>();
    ids.forEach((id, i) => {
      if (seen.has(id)) onResult(i, false, 'ALREADY_INSTALLED');
      else todo.push(i);
      seen.add(id);
    });
  }
  for (let round = 0; todo.length && round <= REPLANS; round++) {
    // a replan reads the slaves anew: its devices were refused by a slave that died meanwhile
    const alive = (await (round ? slaveStates : states)(ctx)).filter((s) => s.alive);
    if (!alive.length) break;
    // a device whose preferred slave is alive goes back there; the others to the least loaded, counting those
    const aliveNames = new Set(alive.map((s) => s.name));
    const back = prefer?.size ? todo.map((i) => prefer.get(ids[i]!)).map((name) => (name && aliveNames.has(name) ? name : undefined)) : [];
    const extra = new Map<string, number>();
    for (const name of back) if (name) extra.set(name, (extra.get(name) ?? 0) + 1);
    const planner = new LeastLoaded(alive.map((s) => ({ name: s.name, devices: s.devices + (extra.get(s.name) ?? 0) })));
    // grouped by slave (in name order), so a batch writes to few lists: same picks, another order, in O(devices)
    const bySlave = new Map<string, number[]>();
    for (let j = 0; j < todo.length; j++) {
      const slave = back[j] ?? planner.next()!;
      let group = bySlave.get(slave);
      if (!group) bySlave.set(slave, (group = []));
      group.push(todo[j]!);
    }
    // two arrays rather than an object a device (a million at the first sync)
    const order: number[] = [];
    const slaveOf: string[] = [];
    for (const slave of [...bySlave.keys()].sort()) for (const i of bySlave.get(slave)!) order.push(i), slaveOf.push(slave);
    const again: number[] = [];
    let next = 0;
    const sender = async () => {
      for (let at; (at = next) < order.length; ) {
        next += BATCH.assign;
        const args: string[] = [];
        for (let j = at; j < Math.min(at + BATCH.assign, order.length); j++) args.push(ids[order[j]!]!, slaveOf[j]!, texts[order[j]!]!);
        const refused = (await ctx.scripts.run('assignDevices', { keys: scriptKeys.assign, args: { slaveTail, ...timing(ctx), devices: args } })) as (number | string)[];
        // the reply lists only the devices refused (position from 1, code): every other went to its planned slave
        let r = 0; // the next refusal
        for (let j = 0; j < args.length / 3; j++) {
          const i = order[at + j]!;
          if (refused[r] !== j + 1) {
            onResult(i, true, slaveOf[at + j]!);
            continue;
          }
          const code = refused[r + 1] as string;
          r += 2;
          if (code === 'NOT_ALIVE') again.push(i);
          else onResult(i, false, code);
        }
      }
    };
    await Promise.all(Array.from({ length: ASSIGNS_IN_FLIGHT }, sender));
    todo = again.sort((a, b) => a - b);
  }
  for (const i of todo) onResult(i, false, 'NO_ACCEPTABLE_WORKER');
}

/** Devices as ids and install texts (DeviceInfo objects encoded as they are). */
function asTexts(devices: readonly DeviceInfo[] | DeviceTexts): DeviceTexts {
  return 'texts' in devices ? devices : toDeviceList(devices);
}

/** New installs for listed devices; `owners` (obnizId → slave, as last read) spares the scripts a lookup. */
export async function updateDevices(ctx: Ctx, devices: readonly DeviceInfo[] | DeviceTexts, owners?: ReadonlyMap<string, string>): Promise<DeviceResult[]> {
  const { ids, texts } = asTexts(devices);
  if (!ids.length) return [];
  const aliveSlave = (await slaveStates(ctx)).find((s) => s.alive)?.name ?? '';
  const plan = ids.map((id, i) => [id, owners?.get(id) ?? '', texts[i]!]);
  return inBatches(plan, BATCH.update, (batch) =>
    ctx.scripts.run('updateDevices', { keys: scriptKeys.update, args: { slaveTail, ...timing(ctx), aliveSlave, devices: batch.flat() } }),
  );
}

/** Devices off their lists; `owners` (obnizId → slave, as last read) spares the scripts a lookup. */
export async function removeDevices(ctx: Ctx, obnizIds: readonly string[], owners?: ReadonlyMap<string, string>): Promise<DeviceResult[]> {
  const plan = obnizIds.map((id) => [id, owners?.get(id) ?? '']);
  return inBatches(plan, BATCH.remove, (batch) =>
    ctx.scripts.run('removeDevices', { keys: scriptKeys.remove, args: { slaveTail, ...timing(ctx), devices: batch.flat() } }),
  );
}

/** Moves as planned, in batches; with `fromMustBeDead`, a device whose slave is alive stays ('ALIVE'). */
export async function moveDevices(ctx: Ctx, moves: readonly Move[], fromMustBeDead = false): Promise<DeviceResult[]> {
  const plan = moves.map((m) => [m.obnizId, m.from, m.to]);
  return inBatches(plan, BATCH.move, (batch) =>
    ctx.scripts.run('moveDevices', { keys: scriptKeys.move, args: { slaveTail, ...timing(ctx), fromMustBeDead: fromMustBeDead ? '1' : '0', moves: batch.flat() } }),
  );
}

/** Deletes a dead slave's keys once its list is empty: 'alive' (it beat meanwhile), 'busy' (devices listed on it meanwhile) or 'gone'. */
export async function forgetSlave(ctx: Ctx, name: string): Promise<'alive' | 'busy' | 'gone'> {
  return (await ctx.scripts.run('forgetSlave', {
    keys: { slaveIndex: {}, workers: { name }, heartbeat: { name }, coordSlaves: {}, listStamps: {} },
    args: { slaveTail, ...timing(ctx), name },
  })) as 'alive' | 'busy' | 'gone';
}

export interface ClaimResult {
  obnizId: string;
  status: 'ok' | 'wait' | 'gone';
  /** New to the fleet: onInstall runs before onStart. */
  fresh: boolean;
  /** Who held the claim before ('' when nobody). */
  holder: string;
}

/** A slave asks to start workers: each device 'ok' (its claim is the slave's now), 'wait' (an alive slave holds it) or 'gone' (off its list). */
export async function claimDevices(ctx: Ctx, name: string, obnizIds: readonly string[]): Promise<ClaimResult[]> {
  const out: ClaimResult[] = [];
  for (let i = 0; i < obnizIds.length; i += BATCH.claim) {
    const reply = (await ctx.scripts.run('claimDevices', {
      keys: { claims: {}, workers: { name }, newInstalls: {}, deviceIndex: {} },
      args: { slaveTail, ...timing(ctx), name, obnizIds: obnizIds.slice(i, i + BATCH.claim) },
    })) as string[];
    for (let j = 0; j < reply.length; j += 4) {
      out.push({ obnizId: reply[j]!, status: reply[j + 1] as ClaimResult['status'], fresh: reply[j + 2] === '1', holder: reply[j + 3]! });
    }
  }
  return out;
}

/** Claims the slave gives back (its workers stopped); returns how many it held. */
export async function releaseDevices(ctx: Ctx, name: string, obnizIds: readonly string[]): Promise<number> {
  let released = 0;
  for (let i = 0; i < obnizIds.length; i += BATCH.release) {
    released += (await ctx.scripts.run('releaseDevices', { keys: { claims: {} }, args: { name, obnizIds: obnizIds.slice(i, i + BATCH.release) } })) as number;
  }
  return released;
}

function triples(reply: unknown): DeviceResult[] {
  const flat = reply as string[];
  const out: DeviceResult[] = [];
  for (let i = 0; i < flat.length; i += 3) out.push({ obnizId: flat[i]!, ok: flat[i + 1] === 'ok', detail: flat[i + 2]! });
  return out;
}
