// The installed-device list from the obniz Cloud API, as obniz-app-sdk reads
// it: the app's installs over GraphQL with the app token, page by page
// (skip/first), at most cloudRateLimit requests per second, each failed page
// retried with a growing pause (HTTP 429 honours Retry-After).
import { normalizeDevices } from '../devices.ts';
import type { DeviceInfo } from '../values.ts';
import { SourceError } from '../errors.ts';
import type { DeviceSource, SourceContext } from './source.ts';
import { causeOf } from './url.ts';

const QUERY = `query app($first: first, $skip: skip) {
  app {
    id
    installs(first: $first, skip: $skip) {
      totalCount
      pageInfo { hasNextPage }
      edges { node { id access_token description metadata devicekey hardware os osVersion region status createdAt configs user { id name email } } }
    }
  }
}`;

const ATTEMPTS = 5;

interface Page {
  edges: ({ node?: DeviceInfo } | null)[];
  hasNextPage: boolean;
}

export function cloudSource(ctx: SourceContext): DeviceSource {
  const endpoint = `${ctx.config.cloudApiUrl.replace(/\/+$/, '')}/v1/graphql`;
  const spacingMs = 1000 / ctx.config.cloudRateLimit;
  let nextSlot = 0;

  /** Waits for the rate limiter's next slot. */
  const slot = async () => {
    const now = ctx.clock.now();
    const at = Math.max(now, nextSlot);
    nextSlot = at + spacingMs;
    if (at > now) await ctx.clock.sleep(at - now);
  };

  const page = async (skip: number): Promise<Page> => {
    for (let attempt = 1; ; attempt++) {
      await slot();
      let retryAfterMs = attempt * 1000;
      let problem: string;
      try {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ctx.config.appToken}` },
          body: JSON.stringify({ query: QUERY, variables: { first: ctx.config.cloudPageSize, skip } }),
          signal: AbortSignal.timeout(30_000),
        });
        if (response.status === 401 || response.status === 403) throw new SourceError(`obniz Cloud API: HTTP ${response.status}: the app token was refused`, { code: 'COORD_ERR_OBNIZ_CLOUD_TOKEN' });
        if (response.ok) {
          const body = (await response.json()) as { data?: { app?: { installs?: { edges?: Page['edges']; pageInfo?: { hasNextPage?: boolean } } } }; errors?: { message?: string }[] };
          if (body.errors?.length) throw new SourceError(`obniz Cloud API: ${body.errors.map((e) => e.message).join('; ')}`);
          const installs = body.data?.app?.installs;
          if (!installs || !Array.isArray(installs.edges)) throw new SourceError('obniz Cloud API: the answer has no app.installs.edges');
          return { edges: installs.edges, hasNextPage: installs.pageInfo?.hasNextPage === true };
        }
        problem = `HTTP ${response.status}`;
        const after = Number(response.headers.get('retry-after'));
        if (response.status === 429 && after > 0) retryAfterMs = after * 1000;
      } catch (err) {
        if (err instanceof SourceError) throw err;
        problem = causeOf(err);
      }
      if (attempt >= ATTEMPTS) throw new SourceError(`obniz Cloud API: ${problem} (gave up after ${ATTEMPTS} attempts at skip ${skip})`);
      ctx.logger.warn('obniz Cloud API request failed; retrying', { problem, attempt, skip, retryInMs: retryAfterMs });
      await ctx.clock.sleep(retryAfterMs);
    }
  };

  return {
    description: 'obniz Cloud API',
    async list() {
      const devices: unknown[] = [];
      for (let skip = 0; ; ) {
        const { edges, hasNextPage } = await page(skip);
        for (const edge of edges) if (edge?.node) devices.push(edge.node);
        if (!hasNextPage || edges.length === 0) break;
        skip += edges.length;
      }
      return normalizeDevices(devices, 'obniz Cloud API');
    },
  };
}
