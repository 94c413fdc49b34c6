// The live managers a proxy hands new sessions to, in turn: read from Redis
// (managers, managed by heartbeat, and each one's host key), and reused for
// MANAGER_CACHE_MS.
import { withDeadline } from '../../../entries/plugin.ts';
import { MANAGER_HOST_TTL, type Ctx } from '../context.ts';
import { STATUS_REDIS_TIMEOUT_MS } from '../views/status.ts';
import { route, type Route } from './route.ts';

/** How long the list of live managers is reused. */
const MANAGER_CACHE_MS = 2000;

export class ManagerList {
  private list: Route[] = [];
  private at = 0;
  private turn = 0;
  private reading?: Promise<void>;
  /** Why the last read of the managers failed, while it does. */
  redisDown?: string;

  constructor(private readonly ctx: Pick<Ctx, 'backend' | 'keys' | 'clock'>) {}

  /**
   * The next live manager not in `exclude`. The list is read again once it is
   * MANAGER_CACHE_MS old; when Redis does not answer that read within
   * STATUS_REDIS_TIMEOUT_MS the last list read is used (a manager waits for
   * Redis within its queue timeout, then refuses naming it), and with none read
   * yet the request is refused at once (`redisDown` says why).
   */
  async next(exclude: Route[]): Promise<Route | undefined> {
    if (this.ctx.clock.now() - this.at > MANAGER_CACHE_MS) {
      const read = (this.reading ??= this.read().finally(() => (this.reading = undefined)));
      try {
        await withDeadline(read, STATUS_REDIS_TIMEOUT_MS);
        this.redisDown = undefined;
      } catch (error) {
        this.redisDown = (error as Error).message;
      }
    }
    const candidates = this.list.filter((m) => !exclude.some((e) => e.host === m.host && e.port === m.port));
    return candidates[this.turn++ % Math.max(1, candidates.length)];
  }

  /** A manager could not be reached: the next request reads the list again. */
  stale(): void {
    this.at = 0;
  }

  private async read(): Promise<void> {
    const { backend, keys, clock } = this.ctx;
    const ids = (await backend.send(['ZRANGEBYSCORE', keys.managers(), clock.now() - MANAGER_HOST_TTL * 1000, '+inf'])) as string[];
    const hosts = ids.length ? ((await backend.pipeline(ids.map((managerId) => ['GET', keys.managerHost({ managerId })]))) as (string | null)[]) : [];
    const list = hosts.filter((h): h is string => typeof h === 'string').map((h) => {
      const at = h.lastIndexOf(':');
      return route(h.slice(0, at), Number(h.slice(at + 1)));
    });
    this.list = list;
    this.at = clock.now();
  }
}
