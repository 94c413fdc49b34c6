// `coord grid status`: the grid as a table, read straight from Redis.
// `coord grid apikey create|list|revoke`: the grid's API keys (api-keys.ts).
import type { CommandTools, PluginCommand } from '../../entries/plugin.ts';
import { createApiKey, listApiKeys, revokeApiKeys } from './api-keys.ts';
import type { Ctx } from './context.ts';
import { gridStatus, type GridStatus } from './status.ts';

export const commands: PluginCommand[] = [
  {
    name: 'grid status',
    description: 'Workers per browser type and state, sessions and queue of a running grid',
    options: [{ flags: '--json', description: 'Print JSON instead of tables' }],
    async run(options, _args, tools: CommandTools) {
      const status = await withGrid(tools, (ctx) =>
        gridStatus(ctx.backend, ctx.keys, { nowMs: ctx.clock.now(), staleMs: ctx.config.staleThreshold * 1000, maxConcurrent: ctx.config.maxConcurrentSessions }),
      );
      tools.print(options.json ? JSON.stringify(status, null, 2) : statusTables(status, tools.table));
    },
  },
  {
    name: 'grid apikey create',
    description: 'Make an API key (pwd_…) that opens the grid beside its token; printed once, kept in Redis only as its hash',
    async run(_options, args, tools: CommandTools) {
      const name = args[0];
      if (!name) {
        tools.printErr('usage: coord grid apikey create NAME --redis URL (NAME: who or what the key is for)');
        return 2;
      }
      const { key, record, heartbeat } = await withGrid(tools, async (ctx) => ({ ...(await createApiKey(ctx.backend, ctx.keys, name, ctx.clock.now())), heartbeat: ctx.config.heartbeatInterval }));
      tools.print(key);
      tools.printErr(`API key ${record.id} (${record.name}) created: every proxy accepts it within one heartbeat (${heartbeat} s). It is shown only now.`);
    },
  },
  {
    name: 'grid apikey list',
    description: 'The grid\'s API keys: id, name, created (never the keys themselves)',
    options: [{ flags: '--json', description: 'Print JSON instead of a table' }],
    async run(options, _args, tools: CommandTools) {
      const records = await withGrid(tools, (ctx) => listApiKeys(ctx.backend, ctx.keys));
      if (options.json) tools.print(JSON.stringify(records, null, 2));
      else tools.print(records.length ? tools.table(['id', 'name', 'created'], records.map((r) => [r.id, r.name, r.createdAt])) : 'no API keys');
    },
  },
  {
    name: 'grid apikey revoke',
    description: 'Revoke API keys by id or name: every proxy refuses them within one heartbeat',
    async run(_options, args, tools: CommandTools) {
      const which = args[0];
      if (!which) {
        tools.printErr('usage: coord grid apikey revoke ID|NAME --redis URL (see coord grid apikey list)');
        return 2;
      }
      const revoked = await withGrid(tools, (ctx) => revokeApiKeys(ctx.backend, ctx.keys, which));
      if (!revoked.length) {
        tools.printErr(`no API key has the id or name "${which}" (coord grid apikey list shows them)`);
        return 1;
      }
      for (const r of revoked) tools.print(`revoked ${r.id} (${r.name})`);
    },
  },
];

/** Runs `use` on the running grid's Redis (--redis, --prefix, --config), closing the connection after. */
async function withGrid<T>(tools: CommandTools, use: (ctx: Ctx) => Promise<T>): Promise<T> {
  const ctx = (await tools.connect()) as Ctx & { close(): Promise<void> };
  try {
    return await use(ctx);
  } finally {
    await ctx.close();
  }
}

/** `table`: CommandTools' table (aligned columns). */
export function statusTables(status: GridStatus, table: CommandTools['table']): string {
  const types = Object.entries(status.types).filter(([, t]) => t.workers > 0 || t.queued > 0);
  const lines = [
    table(
      ['browser', 'workers', 'available', 'draining', 'stale', 'active', 'free', 'queued'],
      types.map(([name, t]) => [name, t.workers, t.available, t.draining, t.stale, t.active, t.free, t.queued]),
    ),
  ];
  if (status.workers.length) {
    lines.push(
      '',
      table(
        ['worker', 'status', 'active', 'lifetime', 'heartbeat', 'version', 'endpoint'],
        status.workers.map((w) => [
          w.ref,
          w.stale ? `${w.status} (stale)` : w.status,
          w.active,
          w.lifetime,
          w.heartbeatAgeMs === null ? '-' : `${(w.heartbeatAgeMs / 1000).toFixed(1)}s ago`,
          w.version || '-',
          w.endpoint,
        ]),
      ),
    );
  } else {
    lines.push('', 'no workers registered');
  }
  return lines.join('\n');
}
