// The obniz scripts, called with their keys and arguments built in one place,
// and their replies turned into typed results. Device batches are split so one
// script call stays short (Redis runs one script at a time).
import type { Command } from '../../core/backend.ts';
import type { Ctx } from './context.ts';
import { contract } from './contract.ts';
import { parseAssignment, toMs, type Assignment, type DeviceInfo } from './values.ts';

/** obniz-app-sdk's Lua errors (and NO_WORKER of the SDK's doAllRelocate, NO_RUNNING_WORKER of its update). */
export type ObnizErrorCode =
  | 'NO_ACCEPTABLE_WORKER'
  | 'NO_RUNNING_WORKER'
  | 'ALREADY_INSTALLED'
  | 'NOT_INSTALLED'
  | 'NO_NEED_TO_RELOCATE'
  | 'NO_OTHER_ACCEPTABLE_WORKER'
  | 'NO_WORKER';

export class ObnizScriptError extends Error {
  override readonly name = 'ObnizScriptError';
  /** `hint` follows the code in the message: what it means here, what to do. */
  constructor(readonly code: ObnizErrorCode, what: string, hint?: string) {
    super(`${what}: ${code}${hint ? `: ${hint}` : ''}`);
  }
}

/** Per-device outcome of a batch script. */
export interface DeviceResult {
  obnizId: string;
  ok: boolean;
  /** The slave on success, the error code otherwise. */
  detail: string;
}

const BATCH = 500;

/** What follows the name in a heartbeat key (':heartbeat'), for scripts that derive heartbeat keys. */
const tail = (pattern: string) => pattern.slice(pattern.indexOf('}') + 1);
const slaveTail = tail(contract.keys.slaveHeartbeat.pattern);
const masterTail = tail(contract.keys.masterHeartbeat.pattern);

function timing(ctx: Ctx) {
  return { nowMs: Math.floor(ctx.clock.now()), deadAfterMs: Math.round(ctx.config.deadAfter * 1000) };
}

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

export async function assignDevices(ctx: Ctx, devices: readonly DeviceInfo[]): Promise<DeviceResult[]> {
  const out: DeviceResult[] = [];
  for (let i = 0; i < devices.length; i += BATCH) {
    const batch = devices.slice(i, i + BATCH);
    const reply = await ctx.scripts.run('assignDevices', {
      keys: { slaveIndex: {}, newInstalls: {}, uninstalls: {}, coordSlaves: {} },
      args: { slaveTail, ...timing(ctx), devices: batch.flatMap((d) => [d.id, JSON.stringify(d)]) },
    });
    out.push(...triples(reply));
  }
  return out;
}

export async function updateDevices(ctx: Ctx, devices: readonly DeviceInfo[]): Promise<DeviceResult[]> {
  const out: DeviceResult[] = [];
  for (let i = 0; i < devices.length; i += BATCH) {
    const batch = devices.slice(i, i + BATCH);
    const reply = await ctx.scripts.run('updateDevices', {
      keys: { slaveIndex: {} },
      args: { slaveTail, ...timing(ctx), devices: batch.flatMap((d) => [d.id, JSON.stringify(d)]) },
    });
    out.push(...triples(reply));
  }
  return out;
}

export async function removeDevices(ctx: Ctx, obnizIds: readonly string[]): Promise<DeviceResult[]> {
  const out: DeviceResult[] = [];
  for (let i = 0; i < obnizIds.length; i += BATCH) {
    const reply = await ctx.scripts.run('removeDevices', {
      keys: { slaveIndex: {}, claims: {}, newInstalls: {}, uninstalls: {} },
      args: { slaveTail, ...timing(ctx), obnizIds: obnizIds.slice(i, i + BATCH) },
    });
    out.push(...triples(reply));
  }
  return out;
}

/** obniz-app-sdk's relocation of one device; throws ObnizScriptError with obniz-app-sdk's codes. */
export async function relocateDevice(ctx: Ctx, obnizId: string, force = false): Promise<{ from: string; to: string }> {
  const reply = (await ctx.scripts.run('relocateDevice', {
    keys: { slaveIndex: {}, newInstalls: {}, coordSlaves: {} },
    args: { slaveTail, ...timing(ctx), obnizId, force: force ? 'true' : 'false' },
  })) as string[];
  if (reply[0] === 'err') {
    const hint = reply[1] === 'NO_NEED_TO_RELOCATE' ? `its slave ${reply[2]} is alive; add --force to move it anyway` : undefined;
    throw new ObnizScriptError(reply[1] as ObnizErrorCode, `relocating ${obnizId}`, hint);
  }
  return { from: reply[1]!, to: reply[2]! };
}

/** Moves every device of a dead slave to the alive ones and deletes its keys; 'alive' when it is not dead. */
export async function relocateSlave(ctx: Ctx, name: string): Promise<'alive' | { obnizId: string; to: string }[]> {
  const reply = (await ctx.scripts.run('relocateSlave', {
    keys: { slaveIndex: {}, workers: { name }, heartbeat: { name }, newInstalls: {}, coordSlaves: {} },
    args: { slaveTail, ...timing(ctx), name },
  })) as string[];
  if (reply[0] === 'alive') return 'alive';
  if (reply[0] === 'err') throw new ObnizScriptError(reply[1] as ObnizErrorCode, `relocating the devices of dead slave ${name}`);
  const moved: { obnizId: string; to: string }[] = [];
  for (let i = 1; i < reply.length; i += 2) moved.push({ obnizId: reply[i]!, to: reply[i + 1]! });
  return moved;
}

/** doAllRelocate: every alive slave ends within 1 of every other. */
export async function relocateAll(ctx: Ctx): Promise<{ moved: number; counts: Record<string, number> }> {
  const reply = (await ctx.scripts.run('relocateAll', { keys: { slaveIndex: {}, newInstalls: {}, coordSlaves: {} }, args: { slaveTail, ...timing(ctx) } })) as (string | number)[];
  if (reply[0] === 'err') throw new ObnizScriptError(reply[1] as ObnizErrorCode, 'relocating all devices');
  const counts: Record<string, number> = {};
  for (let i = 2; i < reply.length; i += 2) counts[String(reply[i])] = Number(reply[i + 1]);
  return { moved: Number(reply[1]), counts };
}

export interface ClaimResult {
  obnizId: string;
  status: 'ok' | 'wait' | 'gone';
  /** New to the fleet: onInstall runs before onStart. */
  fresh: boolean;
  /** Who held the claim before ('' when nobody). */
  holder: string;
}

export async function claimDevices(ctx: Ctx, name: string, obnizIds: readonly string[]): Promise<ClaimResult[]> {
  const out: ClaimResult[] = [];
  for (let i = 0; i < obnizIds.length; i += BATCH) {
    const reply = (await ctx.scripts.run('claimDevices', {
      keys: { claims: {}, workers: { name }, newInstalls: {} },
      args: { slaveTail, ...timing(ctx), name, obnizIds: obnizIds.slice(i, i + BATCH) },
    })) as string[];
    for (let j = 0; j < reply.length; j += 4) {
      out.push({ obnizId: reply[j]!, status: reply[j + 1] as ClaimResult['status'], fresh: reply[j + 2] === '1', holder: reply[j + 3]! });
    }
  }
  return out;
}

export async function releaseDevices(ctx: Ctx, name: string, obnizIds: readonly string[]): Promise<number> {
  let released = 0;
  for (let i = 0; i < obnizIds.length; i += BATCH) {
    released += (await ctx.scripts.run('releaseDevices', { keys: { claims: {} }, args: { name, obnizIds: obnizIds.slice(i, i + BATCH) } })) as number;
  }
  return released;
}

/** Names in the slave index. */
export async function indexedSlaves(ctx: Ctx): Promise<string[]> {
  return (await ctx.backend.send(['ZRANGE', ctx.keys.slaveIndex(), 0, -1])) as string[];
}

/** A slave's distribution list: obnizId → entry (entries that do not parse are skipped). */
export async function readList(ctx: Ctx, name: string): Promise<Map<string, Assignment>> {
  const flat = (await ctx.backend.send(['HGETALL', ctx.keys.workers({ name })])) as string[];
  const out = new Map<string, Assignment>();
  for (let i = 0; i < flat.length; i += 2) {
    const entry = parseAssignment(flat[i + 1]);
    if (entry) out.set(flat[i]!, entry);
  }
  return out;
}

/** Every assignment in the lists of the indexed slaves: obnizId → slave and entry. */
export async function readAssignments(ctx: Ctx): Promise<Map<string, { slave: string; entry: Assignment }>> {
  const names = await indexedSlaves(ctx);
  const replies = await ctx.backend.pipeline(names.map((name): Command => ['HGETALL', ctx.keys.workers({ name })]));
  const out = new Map<string, { slave: string; entry: Assignment }>();
  replies.forEach((reply, i) => {
    if (!Array.isArray(reply)) return;
    for (let j = 0; j < reply.length; j += 2) {
      const entry = parseAssignment(reply[j + 1] as string);
      if (entry) out.set(reply[j] as string, { slave: names[i]!, entry });
    }
  });
  return out;
}

export interface SlaveState {
  name: string;
  /** Last heartbeat in ms, or null when the key is gone. */
  heartbeatMs: number | null;
  alive: boolean;
  devices: number;
}

/** The indexed slaves with their heartbeat and list length. */
export async function slaveStates(ctx: Ctx, names?: readonly string[]): Promise<SlaveState[]> {
  const list = names ?? (await indexedSlaves(ctx));
  const commands = list.flatMap((name): Command[] => [['GET', ctx.keys.slaveHeartbeat({ name })], ['HLEN', ctx.keys.workers({ name })]]);
  const replies = await ctx.backend.pipeline(commands);
  const { nowMs, deadAfterMs } = timing(ctx);
  return list.map((name, i) => {
    const beat = replies[2 * i];
    const heartbeatMs = typeof beat === 'string' && !Number.isNaN(toMs(beat)) ? toMs(beat) : null;
    const devices = replies[2 * i + 1];
    return { name, heartbeatMs, alive: heartbeatMs !== null && heartbeatMs + deadAfterMs >= nowMs, devices: typeof devices === 'number' ? devices : 0 };
  });
}

function triples(reply: unknown): DeviceResult[] {
  const flat = reply as string[];
  const out: DeviceResult[] = [];
  for (let i = 0; i < flat.length; i += 3) out.push({ obnizId: flat[i]!, ok: flat[i + 1] === 'ok', detail: flat[i + 2]! });
  return out;
}
