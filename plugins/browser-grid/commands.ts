// `coord grid status`: the grid as a table, read straight from Redis.
// `coord grid apikey create|list|revoke`: the grid's API keys (the plugin kit's apiKeyCommands).
import { apiKeyCommands, type CommandTools, type PluginCommand } from '../../entries/plugin.ts';
import { API_KEY_PREFIX } from './api-keys.ts';
import type { Ctx } from './context.ts';
import { gridStatus, type GridStatus } from './status.ts';

export const commands: PluginCommand[] = [
  {
    name: 'grid status',
    description: 'Workers per browser type and state, sessions and queue of a running grid',
    options: [{ flags: '--json', description: 'Print JSON instead of tables' }],
    async run(options, _args, tools: CommandTools) {
      const status = await withGrid(tools, (ctx) =>
        gridStatus(ctx, { nowMs: ctx.clock.now(), staleMs: ctx.config.staleThreshold * 1000, maxConcurrent: ctx.config.maxConcurrentSessions }),
      );
      tools.print(options.json ? JSON.stringify(status, null, 2) : statusTables(status, tools.table));
    },
  },
  ...apiKeyCommands<Ctx>({ group: 'grid apikey', prefix: API_KEY_PREFIX, hash: (ctx) => ctx.keys.apiKeys(), heartbeatSeconds: (ctx) => ctx.config.heartbeatInterval }),
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
