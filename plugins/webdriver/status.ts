// The grid's capacity, for GET /status and the API: live orchestrators and
// managers, slots in total and free, sessions active.
import { MANAGER_HOST_TTL, type Ctx } from './context.ts';

export interface Capacity {
  ready: boolean;
  message: string;
  managers: number;
  orchestrators: number;
  slots: { total: number; available: number };
  sessions: { active: number };
}

export async function gridCapacity(ctx: Pick<Ctx, 'backend' | 'keys' | 'clock'>): Promise<Capacity> {
  const { backend, keys, clock } = ctx;
  const [ids, managers, active] = (await backend.pipeline([
    ['SMEMBERS', keys.orchestrators()],
    ['ZCOUNT', keys.managers(), clock.now() - MANAGER_HOST_TTL * 1000, '+inf'],
    ['SCARD', keys.sessionsActive()],
  ])) as [string[], number, number];
  const replies = ids.length
    ? ((await backend.pipeline(
        ids.flatMap((orchestratorId) => [
          ['EXISTS', keys.orchestratorHeartbeat({ orchestratorId })],
          ['SCARD', keys.slots({ orchestratorId })],
          ['LLEN', keys.slotsAvailable({ orchestratorId })],
        ] as [string, string][]),
      )) as number[])
    : [];
  let live = 0;
  let total = 0;
  let available = 0;
  ids.forEach((_id, i) => {
    if (replies[i * 3] !== 1) return;
    live += 1;
    total += replies[i * 3 + 1]!;
    available += replies[i * 3 + 2]!;
  });
  const ready = managers > 0 && live > 0;
  const message = !managers
    ? 'no manager is running'
    : !live
      ? 'no orchestrator is running'
      : `${available} of ${total} slots free on ${live} orchestrator${live === 1 ? '' : 's'}; ${active} active session${active === 1 ? '' : 's'}`;
  return { ready, message, managers, orchestrators: live, slots: { total, available }, sessions: { active } };
}
