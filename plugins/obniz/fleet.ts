// The fleet as Redis holds it, read without scripts: the slave index, each
// slave's heartbeat and distribution list (workers:{name}), where a device is
// listed. What the manager plans with and the slave reads its work from.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';
import { parseAssignment, toMs, type Assignment } from './values.ts';

/** Now and deadAfter in ms, as the scripts and the aliveness checks use them. */
export function timing(ctx: Ctx): { nowMs: number; deadAfterMs: number } {
  return { nowMs: Math.floor(ctx.clock.now()), deadAfterMs: Math.round(ctx.config.deadAfter * 1000) };
}

/** Names in the slave index. */
export async function indexedSlaves(ctx: Ctx): Promise<string[]> {
  return (await ctx.backend.send(['ZRANGE', ctx.keys.slaveIndex(), 0, -1])) as string[];
}

export interface SlaveState {
  name: string;
  /** Last heartbeat in ms, or null when the key is gone. */
  heartbeatMs: number | null;
  alive: boolean;
  devices: number;
}

/** The indexed slaves (or those named) with their heartbeat and list length. */
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

/** The slave whose list holds a device: where the device index says (confirmed), else asked of every indexed list. */
export async function findDevice(ctx: Ctx, obnizId: string, names: readonly string[]): Promise<string | undefined> {
  const indexed = (await ctx.backend.send(['HGET', ctx.keys.deviceIndex(), obnizId])) as string | null;
  if (indexed && (await ctx.backend.send(['HEXISTS', ctx.keys.workers({ name: indexed }), obnizId])) === 1) return indexed;
  const found = await ctx.backend.pipeline(names.map((name): Command => ['HEXISTS', ctx.keys.workers({ name }), obnizId]));
  return names.find((_n, i) => found[i] === 1);
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
