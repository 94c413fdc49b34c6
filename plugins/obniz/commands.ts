// `coord obniz status`, `relocate-all`, `relocate` and `request`:
// a running deployment seen and steered from the command line. The commands
// that act first find the slaves coord's index does not list yet (obniz-app-sdk
// slaves, before any coord manager ran), so they see the fleet the SDK sees.
import type { CommandTools, PluginCommand } from '../../entries/plugin.ts';
import { discover } from './discover.ts';
import { channelFor, envelope } from './messages.ts';
import { KeyRequester } from './requests.ts';
import { relocateAll, relocateDevice } from './relocate.ts';
import { obnizStatus, type ObnizStatus } from './status.ts';
import type { Ctx } from './context.ts';

type CommandCtx = Ctx & { close(): Promise<void> };
const SENDER = `coord-cli-${process.pid}`;

async function withCtx<T>(tools: CommandTools, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const ctx = (await tools.connect()) as CommandCtx;
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/** withCtx for the commands that act: the slaves found by SCAN join the index first (discover). */
function withFleet<T>(tools: CommandTools, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  return withCtx(tools, async (ctx) => {
    if (ctx.config.discover) await discover(ctx);
    return fn(ctx);
  });
}

export const commands: PluginCommand[] = [
  {
    name: 'obniz status',
    description: 'Slaves (heartbeat, devices, running workers) and managers of an obniz deployment',
    options: [{ flags: '--json', description: 'Print JSON instead of tables' }],
    async run(options, _args, tools) {
      const status = await withCtx(tools, obnizStatus);
      tools.print(options.json ? JSON.stringify(status, null, 2) : statusTables(status, tools.table));
    },
  },
  {
    name: 'obniz relocate-all',
    description: 'Balance the devices over the alive slaves (doAllRelocate: every slave within 1 of every other)',
    options: [{ flags: '--json', description: 'Print JSON' }],
    async run(options, _args, tools) {
      const result = await withFleet(tools, async (ctx) => {
        const r = await relocateAll(ctx);
        await synchronize(ctx);
        return r;
      });
      if (options.json) tools.print(JSON.stringify(result, null, 2));
      else tools.print(`moved ${result.moved} devices; now ${Object.entries(result.counts).map(([n, c]) => `${n} ${c}`).join(', ')}`);
    },
  },
  {
    name: 'obniz relocate',
    description: 'Move one device to the least-loaded other alive slave (obniz-app-sdk\'s relocation; --force moves it from an alive slave)',
    options: [{ flags: '--force', description: 'Move it even when its slave is alive' }],
    async run(options, args, tools) {
      const obnizId = args[0];
      if (!obnizId) {
        tools.print('usage: coord obniz relocate OBNIZ_ID [--force]');
        return 2;
      }
      const moved = await withFleet(tools, async (ctx) => {
        const r = await relocateDevice(ctx, obnizId, options.force === true);
        await synchronize(ctx);
        return r;
      });
      tools.print(`moved ${obnizId} from ${moved.from} to ${moved.to}`);
    },
  },
  {
    name: 'obniz request',
    description: 'Ask every worker (or one device with --device) for a key: app.request / app.directRequest',
    options: [{ flags: '--device <obnizId>', description: 'Ask only this device\'s worker' }],
    async run(options, args, tools) {
      const key = args[0];
      if (!key) {
        tools.print('usage: coord obniz request KEY [--device OBNIZ_ID]');
        return 2;
      }
      const results = await withFleet(tools, async (ctx) => {
        const requester = new KeyRequester(ctx, SENDER);
        await requester.start();
        try {
          return options.device === undefined ? await requester.request(key) : await requester.directRequest(String(options.device), key);
        } finally {
          await requester.close();
        }
      });
      tools.print(JSON.stringify(results, null, 2));
    },
  },
];

/** Tells the slaves to read their lists now (the SDK's synchronize broadcast). */
async function synchronize(ctx: Ctx): Promise<void> {
  const message = envelope('synchronize', SENDER, { syncType: 'redis' });
  await ctx.backend.send(['PUBLISH', channelFor(message, ctx.global.redis.keyPrefix, 'manager'), JSON.stringify(message)]);
}

/** `table`: CommandTools' table (aligned columns). */
export function statusTables(status: ObnizStatus, table: CommandTools['table']): string {
  const age = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(1)}s ago`);
  const lines: string[] = [];
  if (status.slaves.length) {
    lines.push(table(['slave', 'state', 'heartbeat', 'devices', 'running'], status.slaves.map((s) => [s.name, s.alive ? 'alive' : 'dead', age(s.heartbeatAgeMs), s.devices, s.running])));
  } else lines.push('no slaves');
  lines.push('');
  if (status.managers.length) lines.push(table(['manager', 'state', 'heartbeat'], status.managers.map((m) => [m.name, m.alive ? 'alive' : 'dead', age(m.heartbeatAgeMs)])));
  else lines.push('no managers');
  lines.push('', `${status.devices} devices assigned, ${status.running} workers running on coord slaves`);
  return lines.join('\n');
}
