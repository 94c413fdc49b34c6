// The member role: registers this process, heartbeats every `interval`, and
// removes its record when it stops. Replace it with your own role: start()
// resolves once the role serves, stop() drains and releases what it holds.
import { hostname } from 'node:os';
import type { Role } from 'coordkit/plugin';
import type { Ctx } from '../context.ts';

/** One heartbeat: the record and the index, through the Lua script. */
export async function touchMember(ctx: Ctx, memberId: string): Promise<boolean> {
  const reply = await ctx.scripts.run('touchMember', {
    keys: { member: { memberId }, members: {} },
    args: { memberId, nowMs: ctx.clock.now(), ttl: ctx.config.ttl },
  });
  return reply === 1;
}

export function memberRole(ctx: Ctx): Role {
  const memberId = ctx.config.memberId ?? `${hostname()}-${process.pid}`;
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    async start() {
      await touchMember(ctx, memberId);
      timer = setInterval(() => {
        touchMember(ctx, memberId).catch((error) => ctx.logger.warn('heartbeat failed', { error: (error as Error).message }));
      }, ctx.config.interval * 1000);
      ctx.logger.info('member registered', { memberId });
    },
    async stop() {
      clearInterval(timer);
      await ctx.backend.multi([
        ['DEL', ctx.keys.member({ memberId })],
        ['ZREM', ctx.keys.members(), memberId],
      ]);
    },
  };
}
