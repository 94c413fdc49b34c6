// Finds slaves and managers that coord's indexes do not list yet (obniz-app-sdk
// processes sharing the Redis write only their own keys) by SCAN from the
// client — never inside a script — and adds them to the indexes. coord's own
// processes index themselves, so a SCAN is only for SDK processes: a whole pass
// at a manager's start and for the commands that act, and in between a pass
// spread over time, one SCAN step every discoverInterval (Discovery).
import { escapeGlob, patternGlob, patternRegex } from '../../entries/plugin.ts';
import { contract } from './contract.ts';
import type { Ctx } from './context.ts';

/** Keys one SCAN step visits (its COUNT). */
export const SCAN_STEP = 1000;

const kinds = [
  { kind: 'slaves', regex: patternRegex(contract.keys.slaveHeartbeat.pattern) },
  { kind: 'slaves', regex: patternRegex(contract.keys.workers.pattern) },
  { kind: 'managers', regex: patternRegex(contract.keys.masterHeartbeat.pattern) },
] as const;

/** Names found in the keyspace: slaves (heartbeat or distribution list) and managers (heartbeat). Read-only. */
export async function scanNames(ctx: Ctx): Promise<{ slaves: string[]; managers: string[] }> {
  const prefix = ctx.global.redis.keyPrefix;
  const namesOf = async (pattern: string) => {
    const regex = patternRegex(pattern);
    const names = new Set<string>();
    for await (const key of ctx.backend.scan(escapeGlob(prefix) + patternGlob(pattern), SCAN_STEP)) {
      const m = regex.exec(key.slice(prefix.length));
      if (m) names.add(m[1]!);
    }
    return [...names];
  };
  const slaves = [...new Set([...(await namesOf(contract.keys.slaveHeartbeat.pattern)), ...(await namesOf(contract.keys.workers.pattern))])];
  return { slaves, managers: await namesOf(contract.keys.masterHeartbeat.pattern) };
}

/** scanNames, then the names added to the indexes. */
export async function discover(ctx: Ctx): Promise<{ slaves: string[]; managers: string[] }> {
  const found = await scanNames(ctx);
  await addToIndexes(ctx, found);
  return found;
}

/** NX: a known member keeps its score, a new one gets 0. */
async function addToIndexes(ctx: Ctx, found: { slaves: string[]; managers: string[] }): Promise<void> {
  if (found.slaves.length) await ctx.backend.send(['ZADD', ctx.keys.slaveIndex(), 'NX', ...found.slaves.flatMap((n) => [0, n])]);
  if (found.managers.length) await ctx.backend.send(['ZADD', ctx.keys.managerIndex(), 'NX', ...found.managers.flatMap((n) => [0, n])]);
}

/**
 * A SCAN pass spread over time: each step() is one SCAN of SCAN_STEP keys from
 * where the last one stopped, so a Redis shared with millions of other keys is
 * visited a little at a time (a full pass over N keys takes N / SCAN_STEP steps).
 * On Redis Cluster it does nothing: obniz-app-sdk cannot run there.
 */
export class Discovery {
  private cursor = '0';
  /** Completed passes (tests wait for one). */
  passes = 0;

  constructor(private readonly ctx: Ctx) {}

  async step(): Promise<void> {
    const { ctx } = this;
    if (ctx.backend.capabilities.cluster) return;
    const prefix = ctx.global.redis.keyPrefix;
    const [next, keys] = (await ctx.backend.send(['SCAN', this.cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', SCAN_STEP])) as [string, string[]];
    this.cursor = next;
    if (next === '0') this.passes++;
    const found = { slaves: new Set<string>(), managers: new Set<string>() };
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      for (const { kind, regex } of kinds) {
        const m = regex.exec(rest);
        if (m) found[kind].add(m[1]!);
      }
    }
    await addToIndexes(ctx, { slaves: [...found.slaves], managers: [...found.managers] });
  }
}
