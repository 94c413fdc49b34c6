// `coord webdriver sessions`: the grid's sessions with their state and
// timings, read straight from Redis. `coord webdriver apikey
// create|list|revoke`: the grid's API keys (access.ts, the plugin kit's apiKeyCommands).
import { apiKeyCommands, type CommandTools, type PluginCommand } from '../../entries/plugin.ts';
import { API_KEY_BYTES, API_KEY_PREFIX, gridSecret } from './access.ts';
import type { Ctx } from './context.ts';
import { readSessions, sessionIds, type SessionView } from './views/sessions.ts';

export const commands: PluginCommand[] = [
  {
    name: 'webdriver sessions',
    description: 'Sessions of a running WebDriver grid with their state and timings',
    options: [
      { flags: '--json', description: 'Print JSON instead of a table' },
      { flags: '--state <state>', description: 'active, terminated or all (default: all)' },
    ],
    async run(options, _args, tools: CommandTools) {
      const state = options.state === undefined ? 'all' : String(options.state);
      if (!['active', 'terminated', 'all'].includes(state)) {
        tools.print(`--state ${state}: expected active, terminated or all`);
        return 2;
      }
      const ctx = (await tools.connect()) as Ctx & { close(): Promise<void> };
      try {
        const sessions = await readSessions(ctx, await sessionIds(ctx, state as 'active' | 'terminated' | 'all'));
        tools.print(options.json ? JSON.stringify(sessions, null, 2) : sessionsTable(sessions, tools.table));
      } finally {
        await ctx.close();
      }
    },
  },
  ...apiKeyCommands<Ctx>({
    group: 'webdriver apikey',
    prefix: API_KEY_PREFIX,
    bytes: API_KEY_BYTES,
    hash: (ctx) => ctx.keys.apiKeys(),
    heartbeatSeconds: (ctx) => ctx.config.heartbeat.interval,
    // the secret first: a proxy that sees a key finds the secret its sessions' secrets come from
    beforeCreate: async (ctx) => ctx.config.proxy.token || (await gridSecret(ctx.backend, ctx.keys)),
  }),
];

const seconds = (s: number | undefined) => (s === undefined ? '-' : `${s.toFixed(1)}s`);

/** `table`: CommandTools' table (aligned columns). */
export function sessionsTable(sessions: readonly SessionView[], table: CommandTools['table']): string {
  if (!sessions.length) return 'no sessions';
  const head = ['session', 'state', 'queued at', 'queued', 'startup', 'alive', 'browser', 'slot', 'last'];
  const rows = sessions.map((s) => [
    s.id,
    s.state,
    s.status.queuedAt ?? '-',
    seconds(s.timings.queued),
    seconds(s.timings.startup),
    seconds(s.timings.alive),
    s.browser ?? '-',
    s.slot ?? '-',
    s.lastCode ?? '-',
  ]);
  return table(head, rows);
}
