// The three commands that manage a plugin's API keys (api-keys.ts) —
// `coord <group> create NAME`, `list [--json]`, `revoke ID|NAME` — made
// once for every plugin that has keys, so their words, help and errors are
// the same everywhere: a mistyped call is one line and exit 2, an unknown
// key one line and exit 1.
import { ApiKeys } from './api-keys.ts';
import type { CommandTools, PluginCommand, RoleContext } from './plugin.ts';

/** What a plugin tells apiKeyCommands. */
export interface ApiKeyCommandsOptions<C extends RoleContext> {
  /** The words before create, list and revoke, e.g. 'grid apikey'. */
  group: string;
  /** What every key starts with, e.g. 'pwd_'. */
  prefix: string;
  /** Random bytes in each key (default 24: 32 characters after the prefix). */
  bytes?: number;
  /** The Redis hash of the keys (a contract key) on a connected context. */
  hash(ctx: C): string;
  /** How often, in seconds, the plugin's servers read the keys again (said when a key is made). */
  heartbeatSeconds(ctx: C): number;
  /** Runs before a key is stored, e.g. to set up what servers need once keys exist. */
  beforeCreate?(ctx: C): Promise<unknown>;
}

/**
 * `coord <group> create|list|revoke` for a plugin's API keys: add them to
 * the plugin's `commands`.
 *
 * @example
 * export const commands: PluginCommand[] = [
 *   ...apiKeyCommands<Ctx>({ group: 'jobs apikey', prefix: 'jbk_', hash: (ctx) => ctx.keys.apiKeys(), heartbeatSeconds: (ctx) => ctx.config.heartbeat }),
 * ];
 */
export function apiKeyCommands<C extends RoleContext>(options: ApiKeyCommandsOptions<C>): PluginCommand[] {
  const { group, prefix } = options;
  /** Runs `use` on the deployment's Redis (--redis, --prefix, --config), closing the connection after. */
  async function withKeys<T>(tools: CommandTools, use: (keys: ApiKeys, ctx: C) => Promise<T>): Promise<T> {
    const ctx = await tools.connect();
    try {
      return await use(new ApiKeys(ctx.backend, options.hash(ctx as unknown as C), prefix, options.bytes), ctx as unknown as C);
    } finally {
      await ctx.close();
    }
  }
  return [
    {
      name: `${group} create`,
      description: `Make an API key (${prefix}…) that opens the deployment beside its token; printed once, kept in Redis only as its hash`,
      async run(_options, args, tools) {
        const name = args[0];
        if (!name) {
          tools.printErr(`usage: coord ${group} create NAME --redis URL (NAME: who or what the key is for)`);
          return 2;
        }
        const { key, record, heartbeat } = await withKeys(tools, async (keys, ctx) => {
          await options.beforeCreate?.(ctx);
          return { ...(await keys.create(name, ctx.clock.now())), heartbeat: options.heartbeatSeconds(ctx) };
        });
        tools.print(key);
        tools.printErr(`API key ${record.id} (${record.name}) created: every proxy accepts it within one heartbeat (${heartbeat} s). It is shown only now.`);
      },
    },
    {
      name: `${group} list`,
      description: 'The API keys: id, name, created (never the keys themselves)',
      options: [{ flags: '--json', description: 'Print JSON instead of a table' }],
      async run(opts, _args, tools) {
        const records = await withKeys(tools, (keys) => keys.list());
        if (opts.json) tools.print(JSON.stringify(records, null, 2));
        else tools.print(records.length ? tools.table(['id', 'name', 'created'], records.map((r) => [r.id, r.name, r.createdAt])) : 'no API keys');
      },
    },
    {
      name: `${group} revoke`,
      description: 'Revoke API keys by id or name: every proxy refuses them within one heartbeat',
      async run(_options, args, tools) {
        const which = args[0];
        if (!which) {
          tools.printErr(`usage: coord ${group} revoke ID|NAME --redis URL (see coord ${group} list)`);
          return 2;
        }
        const revoked = await withKeys(tools, (keys) => keys.revoke(which));
        if (!revoked.length) {
          tools.printErr(`no API key has the id or name "${which}" (coord ${group} list shows them)`);
          return 1;
        }
        for (const r of revoked) tools.print(`revoked ${r.id} (${r.name})`);
      },
    },
  ];
}
