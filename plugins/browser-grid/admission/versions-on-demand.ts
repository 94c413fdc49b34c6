// Versions on demand, the proxy's side: a client of a Playwright version no
// worker serves, which browser-grid.versionsOnDemand allows, is not turned away.
// The proxy asks on the versionWanted channel; one worker process that allows
// the version claims it and starts servers of it; the client waits until they
// register (or the start fails, or nobody claims it, or the queue timeout).
import type { Ctx } from '../context.ts';
import { redisDeadline } from '../redis-deadline.ts';
import type { BrowserType } from '../refs.ts';

export type OnDemand = { kind: 'started' } | { kind: 'failed'; why: string } | { kind: 'unclaimed' } | { kind: 'timeout' } | { kind: 'gone' };

const POLL_MS = 250;
/** Asked again this often, for a worker process that was (re)subscribing when the first message went out. */
const ASK_EVERY_MS = 2000;
/** No worker process claimed the version by then: none allows it. */
const UNCLAIMED_MS = 5000;

/** Asks the worker processes for servers of `version` and waits until one registers, up to `deadline` (ms). Throws when Redis does not answer in time. */
export async function awaitVersion(ctx: Ctx, browserType: BrowserType, version: string, deadline: number, signal: AbortSignal): Promise<OnDemand> {
  const { backend, keys, clock, config } = ctx;
  const wanted = ctx.channels.versionWanted({ browserType });
  const claimKey = keys.versionClaim({ browserType, version });
  const started = clock.now();
  let asked = 0;
  let claimed = false;
  while (!signal.aborted && clock.now() < deadline) {
    if (clock.now() - asked >= ASK_EVERY_MS) {
      asked = clock.now();
      await redisDeadline(backend.send(['PUBLISH', wanted, version]));
    }
    const [seen, claim] = await redisDeadline(Promise.all([backend.send(['HGET', keys.versions({ browserType }), version]), backend.send(['GET', claimKey])]));
    if (seen !== null && clock.now() - Number(seen) <= config.staleThreshold * 1000) return { kind: 'started' };
    if (typeof claim === 'string' && claim.startsWith('failed: ')) return { kind: 'failed', why: claim.slice('failed: '.length) };
    claimed ||= claim !== null;
    if (!claimed && clock.now() - started >= UNCLAIMED_MS) return { kind: 'unclaimed' };
    await clock.sleep(POLL_MS, signal).catch(() => {});
  }
  return signal.aborted ? { kind: 'gone' } : { kind: 'timeout' };
}
