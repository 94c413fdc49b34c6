// Mixed fleets: a playwright-distributed worker registers only its hash (and
// counter fields), not coord's indexes. The proxy finds such workers with a
// SCAN every few heartbeats and files them in the indexes, after which they
// are selected like coord's own.
import { patternGlob, patternRegex } from '../../core/contract.ts';
import type { RoleContext } from '../../core/plugin.ts';
import type { BrowserGridConfig } from './config.ts';
import { contract, type BrowserGridKeys } from './contract.ts';
import { parseRef, workerRef } from './refs.ts';

type Ctx = RoleContext<BrowserGridConfig, BrowserGridKeys>;

/** Indexes every worker hash the indexes do not know yet; returns the refs adopted. */
export async function adoptWorkers(ctx: Ctx): Promise<string[]> {
  const { keyPrefix } = ctx.global.redis;
  const spec = contract.keys.worker;
  const shape = patternRegex(spec.pattern, spec.params);
  const found: string[] = [];
  for await (const key of ctx.backend.scan(keyPrefix + patternGlob(spec.pattern), 500)) {
    const m = shape.exec(key.slice(keyPrefix.length));
    if (m) found.push(workerRef(m[1]!, m[2]!));
  }
  if (!found.length) return [];
  const scores = await ctx.backend.pipeline(found.map((ref) => ['ZSCORE', ctx.keys.workerIndex({ browserType: parseRef(ref).browserType }), ref]));
  const unknown = found.filter((_ref, i) => scores[i] === null);
  for (const ref of unknown) {
    const { browserType, workerId } = parseRef(ref);
    await ctx.scripts.run('touchWorker', {
      keys: { worker: { browserType, workerId }, active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType } },
      args: {
        ref,
        nowMs: ctx.clock.now(),
        staleMs: ctx.config.staleThreshold * 1000,
        maxConcurrent: ctx.config.maxConcurrentSessions,
        maxLifetime: ctx.config.maxLifetimeSessions,
        ttl: 0,
        fields: [],
      },
    });
  }
  return unknown;
}
