// Finds slaves and managers that coord's indexes do not list yet (obniz-app-sdk
// processes sharing the Redis write only their own keys) by SCAN from the
// client — never inside a script — and adds them to the indexes.
import { patternGlob, patternRegex } from '../../core/contract.ts';
import { escapeGlob } from '../../core/snapshot.ts';
import { contract } from './contract.ts';
import type { Ctx } from './context.ts';

/** Names found in the keyspace: slaves (heartbeat or distribution list) and managers (heartbeat). Read-only. */
export async function scanNames(ctx: Ctx): Promise<{ slaves: string[]; managers: string[] }> {
  const prefix = ctx.global.redis.keyPrefix;
  const namesOf = async (pattern: string) => {
    const regex = patternRegex(pattern);
    const names = new Set<string>();
    for await (const key of ctx.backend.scan(escapeGlob(prefix) + patternGlob(pattern), 1000)) {
      const m = regex.exec(key.slice(prefix.length));
      if (m) names.add(m[1]!);
    }
    return [...names];
  };
  const slaves = [...new Set([...(await namesOf(contract.keys.slaveHeartbeat.pattern)), ...(await namesOf(contract.keys.workers.pattern))])];
  return { slaves, managers: await namesOf(contract.keys.masterHeartbeat.pattern) };
}

/** scanNames, then the names added to the indexes (NX: a known member keeps its score, a new one gets 0). */
export async function discover(ctx: Ctx): Promise<{ slaves: string[]; managers: string[] }> {
  const found = await scanNames(ctx);
  if (found.slaves.length) await ctx.backend.send(['ZADD', ctx.keys.slaveIndex(), 'NX', ...found.slaves.flatMap((n) => [0, n])]);
  if (found.managers.length) await ctx.backend.send(['ZADD', ctx.keys.managerIndex(), 'NX', ...found.managers.flatMap((n) => [0, n])]);
  return found;
}
