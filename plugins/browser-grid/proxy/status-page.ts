// /status lists the workers a page at a time: at 10,000 workers the whole list
// was 3.5 MB of JSON and took ~300 ms to read (bench/scale.mjs), while the
// totals per browser type, which dashboards poll, are counted inside Redis.
// ?limit=N (default STATUS_PAGE; 0 for the totals alone) and ?after=REF (the
// `next` link's) page through the workers in ref order.

/** Workers /status lists when no limit is asked. */
export const STATUS_PAGE = 1000;

export type StatusPage = { after?: string; limit: number } | { problem: string };

/** The page `url` asks for, or what is wrong with its query. */
export function statusPage(url: URL): StatusPage {
  const limit = url.searchParams.get('limit');
  const after = url.searchParams.get('after') ?? undefined;
  if (limit === null) return { after, limit: STATUS_PAGE };
  if (!/^\d+$/.test(limit)) return { problem: `limit=${limit}: expected a whole number of workers, 0 or more (0: the totals alone)` };
  return { after, limit: Number(limit) };
}

/** The link to the page after `lastRef`, or null when no worker follows. */
export function nextLink(lastRef: string | null, limit: number): string | null {
  return lastRef === null ? null : `/status?after=${encodeURIComponent(lastRef)}&limit=${limit}`;
}
