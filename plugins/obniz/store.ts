// The obniz scripts, called with their keys and arguments built in one place,
// and their replies turned into typed results. The work that grows with the
// fleet (which slave takes which device) is planned here; scripts only check and
// write a plan, a bounded batch at a time, so one call stays short (Redis runs
// one script at a time, and may be shared with a browser grid, a queue…).
import type { Command } from '../../core/backend.ts';
import type { Ctx } from './context.ts';
import { contract } from './contract.ts';
import { LeastLoaded } from './plan.ts';
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

/**
 * Devices per script call, so each call's work stays well under 2 ms with 500
 * slaves (Redis runs one script at a time): each script does a few O(1)
 * commands a device and none per slave of the fleet. bench/obniz.mjs times
 * every call with SLOWLOG: at 100 a call p99.9 was 1.8 ms, at 50 it is 0.9–1.4
 * ms, for 15% more time in a 100,000-device first sync.
 */
const BATCH = { assign: 50, update: 50, remove: 50, move: 50, claim: 50, release: 500 } as const;

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

/** One device's move: from the slave whose list holds it to another. */
export interface Move {
  obnizId: string;
  from: string;
  to: string;
}

/** A planned device whose slave died between the plan and its script: planned again, up to this many times. */
const REPLANS = 3;

/**
 * obniz-app-sdk's assignment: each device to the alive slave with the fewest
 * devices (ties: the first by name). Planned here from the list lengths, written
 * in batches by assignDevices.lua, which checks each device in O(1). `prefer`
 * (obnizId → slave) sends a device back to the slave it was on when that slave
 * is alive: after Redis restarted empty, a device keeps running where it ran.
 */
export async function assignDevices(ctx: Ctx, devices: readonly DeviceInfo[], prefer?: ReadonlyMap<string, string>): Promise<DeviceResult[]> {
  const results = new Map<number, DeviceResult>();
  const seen = new Set<string>();
  let todo: number[] = [];
  devices.forEach((d, i) => {
    if (seen.has(d.id)) results.set(i, { obnizId: d.id, ok: false, detail: 'ALREADY_INSTALLED' });
    else todo.push(i);
    seen.add(d.id);
  });
  for (let round = 0; todo.length && round <= REPLANS; round++) {
    const alive = (await slaveStates(ctx)).filter((s) => s.alive);
    if (!alive.length) break;
    // a device whose preferred slave is alive goes back there; the others to the least loaded, counting those
    const aliveNames = new Set(alive.map((s) => s.name));
    const back = todo.map((i) => prefer?.get(devices[i]!.id)).map((name) => (name && aliveNames.has(name) ? name : undefined));
    const extra = new Map<string, number>();
    for (const name of back) if (name) extra.set(name, (extra.get(name) ?? 0) + 1);
    const planner = new LeastLoaded(alive.map((s) => ({ name: s.name, devices: s.devices + (extra.get(s.name) ?? 0) })));
    // grouped by slave, so a batch writes to few lists (same picks, another order)
    const slaveOf = todo.map((_i, j) => back[j] ?? planner.next()!);
    const order = todo.map((_i, j) => j).sort((a, b) => (slaveOf[a]! < slaveOf[b]! ? -1 : slaveOf[a]! > slaveOf[b]! ? 1 : a - b));
    const plan = order.map((j) => [devices[todo[j]!]!.id, slaveOf[j]!, JSON.stringify(devices[todo[j]!])]);
    todo = order.map((j) => todo[j]!);
    const replies = await inBatches(plan, BATCH.assign, (batch) =>
      ctx.scripts.run('assignDevices', { keys: scriptKeys.assign, args: { slaveTail, ...timing(ctx), devices: batch.flat() } }),
    );
    const again: number[] = [];
    replies.forEach((r, j) => (r.detail === 'NOT_ALIVE' ? again.push(todo[j]!) : results.set(todo[j]!, r)));
    todo = again;
  }
  for (const i of todo) results.set(i, { obnizId: devices[i]!.id, ok: false, detail: 'NO_ACCEPTABLE_WORKER' });
  return devices.map((_d, i) => results.get(i)!);
}

/** New installs for listed devices; `owners` (obnizId → slave, as last read) spares the scripts a lookup. */
export async function updateDevices(ctx: Ctx, devices: readonly DeviceInfo[], owners?: ReadonlyMap<string, string>): Promise<DeviceResult[]> {
  if (!devices.length) return [];
  const aliveSlave = (await slaveStates(ctx)).find((s) => s.alive)?.name ?? '';
  const plan = devices.map((d) => [d.id, owners?.get(d.id) ?? '', JSON.stringify(d)]);
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

/** The slave whose list holds a device: where the device index says (confirmed), else asked of every indexed list. */
export async function findDevice(ctx: Ctx, obnizId: string, names: readonly string[]): Promise<string | undefined> {
  const indexed = (await ctx.backend.send(['HGET', ctx.keys.deviceIndex(), obnizId])) as string | null;
  if (indexed && (await ctx.backend.send(['HEXISTS', ctx.keys.workers({ name: indexed }), obnizId])) === 1) return indexed;
  const found = await ctx.backend.pipeline(names.map((name): Command => ['HEXISTS', ctx.keys.workers({ name }), obnizId]));
  return names.find((_n, i) => found[i] === 1);
}

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
    const left = (await ctx.scripts.run('forgetSlave', {
      keys: { slaveIndex: {}, workers: { name }, heartbeat: { name }, coordSlaves: {}, listStamps: {} },
      args: { slaveTail, ...timing(ctx), name },
    })) as 'alive' | 'busy' | 'gone';
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

export async function releaseDevices(ctx: Ctx, name: string, obnizIds: readonly string[]): Promise<number> {
  let released = 0;
  for (let i = 0; i < obnizIds.length; i += BATCH.release) {
    released += (await ctx.scripts.run('releaseDevices', { keys: { claims: {} }, args: { name, obnizIds: obnizIds.slice(i, i + BATCH.release) } })) as number;
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
