// Every call of load-test's Lua scripts (lua/*.lua), one typed function per
// operation: the orchestrator's test lifecycle, the workers' users and
// resource pools, and the conformance scenarios all go through here, never
// through ctx.scripts. Each function passes the keys by contract entry, turns
// the script's reply into values, and a refusal ({'err', CODE, …}: another
// test's epoch, a state that changed) into a ConflictError.
import { randomUUID } from 'node:crypto';
import type { Reply } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { contract, type TestState } from './contract.ts';
import { ConflictError } from './errors.ts';

/** What a script call needs of the role context. */
type ScriptCtx = Pick<Ctx, 'scripts' | 'clock' | 'config'>;

/** Unix seconds with milliseconds, as the scripts write times (vikhry's tools write time.time()). */
export function nowSeconds(ctx: Pick<Ctx, 'clock'>): string {
  return (ctx.clock.now() / 1000).toFixed(3);
}

/**
 * The part of a per-worker key's pattern after {workerId} (':users' of
 * 'worker:{workerId}:users'): addUsers and removeUsers build the keys of the
 * workers they choose from it, so the names stay the contract's alone.
 */
function workerKeyTail(entry: 'workerUsers' | 'workerCommands'): string {
  const pattern = contract.keys[entry].pattern;
  return pattern.slice(pattern.indexOf('{workerId}') + '{workerId}'.length);
}

/** IDLE → PREPARING, epoch + 1 and the orchestrator's lease, in one step (beginTest.lua). */
export async function beginTest(ctx: ScriptCtx, owner: string, leaseSeconds: number): Promise<{ epoch: number; generation: string }> {
  const reply = (await ctx.scripts.run('beginTest', {
    keys: { state: {}, epoch: {}, lease: {}, generation: {} },
    args: { owner, leaseSeconds, newGeneration: randomUUID() },
  })) as string[];
  if (reply[0] !== 'ok') {
    if (reply[1] === 'LEASE_HELD') throw new ConflictError('another orchestrator is still ending its test: try again in a moment');
    throw new ConflictError(`the test is ${reply[2]}: another test is running`);
  }
  return { epoch: Number(reply[1]), generation: reply[2]! };
}

/** STOPPING (or a failed start's PREPARING) → IDLE and the lease given back, in one step (endTest.lua). */
export async function endTest(ctx: ScriptCtx, from: TestState, epoch: number, owner: string): Promise<void> {
  const reply = (await ctx.scripts.run('endTest', { keys: { state: {}, epoch: {}, lease: {} }, args: { from, expectEpoch: epoch, owner } })) as string[];
  if (reply[0] !== 'ok') throw new ConflictError(`ending test ${epoch}: ${reply[1]} ${reply[2]}`);
}

/** Compare-and-set of the test's state (transitionState.lua); resolves to the epoch. */
export async function transitionState(ctx: ScriptCtx, from: TestState, to: TestState, bump: boolean, expectEpoch?: number): Promise<number> {
  const reply = (await ctx.scripts.run('transitionState', {
    keys: { state: {}, epoch: {} },
    args: { from, to, bump: bump ? '1' : '0', expectEpoch: expectEpoch === undefined ? '' : expectEpoch },
  })) as string[];
  if (reply[0] !== 'ok') {
    if (reply[1] === 'STATE_CONFLICT') throw new ConflictError(`the test is ${reply[2]}, not ${from}: ${from === 'IDLE' ? 'another test is running' : 'another orchestrator changed it'}`);
    throw new ConflictError(`the test epoch is ${reply[2]}, not ${expectEpoch}: another orchestrator started a newer test`);
  }
  return Number(reply[1]);
}

/**
 * Assigns `count` new users (or the given `ids`, a dead worker's) round-robin
 * over `workers`, each with its add_user command (addUsers.lua); resolves to
 * the [userId, workerId] pairs assigned.
 */
export async function addUsers(
  ctx: ScriptCtx,
  epoch: number,
  users: { count: number; ids: readonly string[]; target: number; workers: readonly string[] },
): Promise<[string, string][]> {
  const reply = await ctx.scripts.run('addUsers', {
    keys: { users: {}, cursor: {}, state: {}, epoch: {} },
    args: {
      ...userCommandArgs(ctx, epoch),
      count: users.count,
      ids: JSON.stringify(users.ids),
      target: users.target,
      workers: users.workers,
    },
  });
  return pairs(reply, 'addUsers');
}

/** What addUsers and removeUsers share: where each worker's users and commands are (key endings from the contract), the epoch they expect, and the command they write. */
function userCommandArgs(ctx: ScriptCtx, epoch: number) {
  return {
    usersTail: workerKeyTail('workerUsers'),
    commandsTail: workerKeyTail('workerCommands'),
    expectEpoch: epoch,
    now: nowSeconds(ctx),
    commandId: randomUUID(),
    cap: ctx.config.commandStreamMaxLen,
  };
}

/** Unassigns the `count` users with the highest ids, each with its remove_user command (removeUsers.lua); resolves to the pairs removed. */
export async function removeUsers(ctx: ScriptCtx, epoch: number, users: { count: number; target: number }): Promise<[string, string][]> {
  const reply = await ctx.scripts.run('removeUsers', {
    keys: { users: {}, state: {}, epoch: {} },
    args: {
      ...userCommandArgs(ctx, epoch),
      count: users.count,
      target: users.target,
    },
  });
  return pairs(reply, 'removeUsers');
}

/** Queues one command on each worker's command stream while `epoch` is current (broadcast.lua); resolves to worker → its entry's id. */
export async function broadcast(ctx: ScriptCtx, epoch: number, type: string, payload: unknown, workers: readonly string[]): Promise<Map<string, string>> {
  if (!workers.length) return new Map();
  const reply = await ctx.scripts.run('broadcast', {
    keys: { epoch: {}, commands: workers.map((workerId) => ({ workerId })) },
    args: {
      expectEpoch: epoch,
      type,
      payload: JSON.stringify(payload),
      commandId: randomUUID(),
      now: nowSeconds(ctx),
      cap: ctx.config.commandStreamMaxLen,
      workers,
    },
  });
  return new Map(pairs(reply, 'broadcast'));
}

/** Takes a dead worker out (dropWorker.lua); resolves to the users it had, for reassignment ([] when it was already dropped). */
export async function dropWorker(ctx: ScriptCtx, workerId: string, keepSeconds = 3600): Promise<string[]> {
  return (await ctx.scripts.run('dropWorker', {
    keys: { workers: {}, status: { workerId }, users: { workerId }, active: { workerId }, commands: { workerId }, ack: { workerId } },
    args: { workerId, now: nowSeconds(ctx), keepSeconds },
  })) as string[];
}

/** Records a worker's users as running, those still assigned to it (markRunning.lua). */
export async function markRunning(ctx: Pick<Ctx, 'scripts' | 'clock'>, workerId: string, userIds: readonly (string | number)[]): Promise<void> {
  if (!userIds.length) return;
  await ctx.scripts.run('markRunning', {
    keys: { active: { workerId }, users: userIds.map((userId) => ({ userId })) },
    args: { workerId, now: nowSeconds(ctx), userIds },
  });
}

/** Moves a resource pool's newly declared ids into its available set, once however many call it (syncPool.lua). */
export async function syncPool(ctx: Pick<Ctx, 'scripts'>, name: string): Promise<void> {
  await ctx.scripts.run('syncPool', { keys: { resources: {}, available: { name }, loaded: { name } }, args: { name } });
}

/** A script's flat {a, b, a, b…} reply as pairs; its refusal ({'err', CODE, detail}) a ConflictError. */
function pairs(reply: Reply, script: string): [string, string][] {
  const list = reply as string[];
  if (list[0] === 'err') throw new ConflictError(`${script}: ${list[1]} ${list[2] ?? ''}`.trim());
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([list[i]!, list[i + 1]!]);
  return out;
}
