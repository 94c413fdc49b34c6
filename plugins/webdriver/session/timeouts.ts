// The grid's timeouts live in WebGrid's `timeouts` hash, so an operator can
// change them for every process at once. Read with the config's values as
// defaults; a missing field is written back (HSETNX: a value already there wins).
import type { Timeouts } from '../config.ts';
import type { Ctx } from '../context.ts';

const names = ['queue', 'scheduling', 'nodeStartup', 'driverStartup', 'sessionTermination', 'slotReclaimInterval'] as const;

export async function readTimeouts(ctx: Ctx): Promise<Timeouts> {
  const key = ctx.keys.timeouts();
  const stored = (await ctx.backend.send(['HMGET', key, ...names])) as (string | null)[];
  const out = { ...ctx.config.timeouts };
  const missing: (string | number)[] = [];
  names.forEach((name, i) => {
    const value = Number(stored[i]);
    if (stored[i] !== null && Number.isFinite(value) && value > 0) out[name] = value;
    else missing.push(name);
  });
  for (const name of missing) await ctx.backend.send(['HSETNX', key, name as string, ctx.config.timeouts[name as keyof Timeouts]]);
  return out;
}
