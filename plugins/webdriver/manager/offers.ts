// What the live orchestrators offer, as a manager matches a new session's
// capabilities against it: each orchestrator with a live heartbeat, its
// platform and its browsers. A queue of hundreds re-matches from one read a
// second (sharedOffers), not hundreds.
import type { Ctx } from '../context.ts';
import type { Offer } from '../session/capabilities.ts';

/** How long the orchestrators' offers read for one queued request serve the others. */
const OFFERS_FRESH_MS = 1000;

type Reader = Pick<Ctx, 'backend' | 'keys'>;

/** Orchestrators with a live heartbeat, and what each offers. */
export async function liveOffers(ctx: Reader): Promise<Map<string, Offer>> {
  const { backend, keys } = ctx;
  const ids = (await backend.send(['SMEMBERS', keys.orchestrators()])) as string[];
  const offers = new Map<string, Offer>();
  if (!ids.length) return offers;
  const replies = await backend.pipeline(
    ids.flatMap((orchestratorId) => [
      ['EXISTS', keys.orchestratorHeartbeat({ orchestratorId })],
      ['GET', keys.orchestratorPlatformName({ orchestratorId })],
      ['SMEMBERS', keys.orchestratorBrowsers({ orchestratorId })],
    ] as [string, string][]),
  );
  ids.forEach((orchestratorId, i) => {
    const [alive, platformName, browsers] = replies.slice(i * 3, i * 3 + 3) as [number, string | null, string[]];
    if (alive === 1 && platformName) offers.set(orchestratorId, { platformName, browsers });
  });
  return offers;
}

/** liveOffers, read at most once per OFFERS_FRESH_MS (or the `maxAgeMs` a caller accepts) for all the requests in a manager's queue. */
export function sharedOffers(ctx: Reader & Pick<Ctx, 'clock'>): (maxAgeMs?: number) => Promise<Map<string, Offer>> {
  let offers: { at: number; read: Promise<Map<string, Offer>> } | undefined;
  return (maxAgeMs = OFFERS_FRESH_MS) => {
    if (!offers || ctx.clock.now() - offers.at > maxAgeMs) {
      const read = liveOffers(ctx);
      offers = { at: ctx.clock.now(), read };
      read.catch(() => (offers = undefined));
    }
    return offers.read;
  };
}

/** The offers as a refusal names them. */
export function describeOffers(offers: Map<string, Offer>): string {
  if (!offers.size) return 'no live orchestrator';
  return [...offers].map(([id, o]) => `${id}: ${o.platformName} ${o.browsers.join(', ')}`).join('; ');
}
