// coord's per-device keys (the device index, the claims, the pending-onInstall
// marks) are each split over DEVICE_SHARDS keys by a hash of the obnizId. One
// key of a million entries made Redis grow its table in one step inside a
// script call: allocating a table twice the size took over a millisecond as the
// key passed 131,072, 262,144 and 524,288 entries, where a shard of 16,000 grows
// in about a tenth of that. lua/lib/shards.lua computes the same shard.
import type { Command } from '../../entries/plugin.ts';
import type { Ctx } from './context.ts';

export const DEVICE_SHARDS = 64;

const encoder = new TextEncoder();

/** The shard of a device: h = h·31 + byte over the id's UTF-8 bytes, mod 2³¹−1, then mod DEVICE_SHARDS (exact in Lua's doubles too). */
export function shardOf(obnizId: string): number {
  let h = 0;
  for (const byte of encoder.encode(obnizId)) h = (h * 31 + byte) % 2147483647;
  return h % DEVICE_SHARDS;
}

/** Every shard number, for a read over all of a key's shards. */
export const allShards: readonly number[] = Array.from({ length: DEVICE_SHARDS }, (_v, i) => i);

/** The device index's key for a device. */
export const deviceIndexKey = (ctx: Ctx, obnizId: string): string => ctx.keys.deviceIndex({ shard: shardOf(obnizId) });

/** The claims key for a device. */
export const claimsKey = (ctx: Ctx, obnizId: string): string => ctx.keys.claims({ shard: shardOf(obnizId) });

/** Devices grouped by their shard of `key`: one command per shard, as `command(key, ids)` builds it. */
export function perShard(obnizIds: readonly string[], key: (shard: number) => string, command: (key: string, ids: string[]) => Command): Command[] {
  const groups = new Map<number, string[]>();
  for (const id of obnizIds) {
    const shard = shardOf(id);
    const ids = groups.get(shard);
    if (ids) ids.push(id);
    else groups.set(shard, [id]);
  }
  return [...groups].map(([shard, ids]) => command(key(shard), ids));
}
