// coord's per-device keys (the device index, the claims, the pending-onInstall
// marks) are each split over DEVICE_SHARDS keys by a hash of the obnizId. One
// key of a million entries made Redis grow its table in one step inside a
// script call: over a millisecond as the key passed 131,072, 262,144 and
// 524,288 entries. 16 shards keep a 1,000,000-device fleet's keys at 62,500
// entries, and a script call of 50 devices writes about 15 of them (a command
// each): 64 made each device a command of its own, a third more time a call.
// The callers name each device's shard to the scripts, so no Lua hashes an id.
import type { Ctx } from './context.ts';

export const DEVICE_SHARDS = 16;

const encoder = new TextEncoder();

/** The shard of a device: h = h·31 + byte over the id's UTF-8 bytes, mod 2³¹−1, then mod DEVICE_SHARDS. */
export function shardOf(obnizId: string): number {
  let h = 0;
  for (let i = 0; i < obnizId.length; i++) {
    const code = obnizId.charCodeAt(i);
    if (code > 0x7f) return shardOfBytes(encoder.encode(obnizId)); // not ASCII: its UTF-8 bytes
    h = (h * 31 + code) % 2147483647;
  }
  return h % DEVICE_SHARDS;
}

function shardOfBytes(bytes: Uint8Array): number {
  let h = 0;
  for (const byte of bytes) h = (h * 31 + byte) % 2147483647;
  return h % DEVICE_SHARDS;
}

/** Every shard number, for a read over all of a key's shards. */
export const allShards: readonly number[] = Array.from({ length: DEVICE_SHARDS }, (_v, i) => i);

/** The device index's key for a device. */
export const deviceIndexKey = (ctx: Ctx, obnizId: string): string => ctx.keys.deviceIndex({ shard: shardOf(obnizId) });

/** The claims key for a device. */
export const claimsKey = (ctx: Ctx, obnizId: string): string => ctx.keys.claims({ shard: shardOf(obnizId) });

/** `obnizIds` each followed by its shard, as the scripts take devices. */
export function withShards(obnizIds: readonly string[]): string[] {
  return obnizIds.flatMap((id) => [id, String(shardOf(id))]);
}
