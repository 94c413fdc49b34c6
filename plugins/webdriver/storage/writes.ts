// The storage role's writes to Redis, one function each, so the conformance
// scenario drives the same steps the role does.
import type { Ctx } from '../context.ts';
import { STORAGE_HOST_TTL } from './files.ts';

type Writer = Pick<Ctx, 'backend' | 'keys'>;

/** storage:{sid}:{pid}:host with its TTL, and the provider's heartbeat in the index the proxy reads. */
export function announceProvider(ctx: Writer, storageId: string, providerId: string, hostPort: string, now = Date.now()): Promise<unknown> {
  return ctx.backend.multi([
    ['SET', ctx.keys.storageHost({ storageId, providerId }), hostPort, 'EX', STORAGE_HOST_TTL],
    ['ZADD', ctx.keys.storageProviders({ storageId }), now, providerId],
    // providers killed without withdrawing: gone from the index once their host key has long expired
    ['ZREMRANGEBYSCORE', ctx.keys.storageProviders({ storageId }), '-inf', now - 2 * STORAGE_HOST_TTL * 1000],
  ]);
}

export function withdrawProvider(ctx: Writer, storageId: string, providerId: string): Promise<unknown> {
  return ctx.backend.multi([
    ['DEL', ctx.keys.storageHost({ storageId, providerId })],
    ['ZREM', ctx.keys.storageProviders({ storageId }), providerId],
  ]);
}

export function writeDiskMetrics(ctx: Writer, storageId: string, total: number, used: number): Promise<unknown> {
  return ctx.backend.multi([
    ['HSET', ctx.keys.diskTotal(), storageId, total],
    ['HSET', ctx.keys.diskUsed(), storageId, used],
  ]);
}

/** A recording deleted by the limits: its session no longer links it (unless its key names another storage by now). */
export async function forgetRecording(ctx: Writer, storageId: string, sessionId: string): Promise<void> {
  const key = ctx.keys.sessionStorage({ sessionId });
  if ((await ctx.backend.send(['GET', key])) === storageId) await ctx.backend.send(['DEL', key]);
}
