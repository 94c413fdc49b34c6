// Options shared by the commands that name a deployment, and how their values
// become config flags (the last layer of loadConfig).
import type { Command } from 'cac';
import { parseSetFlag, schemaAt, type ConfigFlag } from '../core/config-flags.ts';
import { list, text } from '../core/option-values.ts';
import { PluginError } from '../core/errors.ts';
import type { Plugin } from '../core/plugin.ts';

export { list, text };

/** Command-line flags → config paths. */
const CONFIG_OPTIONS = [
  { flags: '--redis <url>', path: 'redis.url', description: 'Redis URL: redis://host:port, rediss://…, redis://h1:p1,h2:p2 (cluster), redis+sentinel://s1:p1,s2:p2/MASTER_NAME; default: REDIS_URL, else embedded (a password: REDIS_URL or redis.passwordFile keep it out of ps)' },
  { flags: '--redis-ca-file <file>', path: 'redis.tls.caFile', description: "rediss://: PEM file of the CA that signed the Redis server's certificate" },
  { flags: '--redis-cert-file <file>', path: 'redis.tls.certFile', description: 'rediss://: PEM client certificate, for a server with tls-auth-clients (with --redis-key-file)' },
  { flags: '--redis-key-file <file>', path: 'redis.tls.keyFile', description: 'rediss://: PEM private key of --redis-cert-file' },
  { flags: '--adapter <name>', path: 'redis.adapter', description: 'Client library: ioredis, node-redis or embedded' },
  { flags: '--prefix <keyPrefix>', path: 'redis.keyPrefix', description: "Key prefix of the deployment, e.g. '{grid}:'" },
  { flags: '--log-level <level>', path: 'log.level', description: 'debug, info, warn or error' },
  { flags: '--log-format <format>', path: 'log.format', description: 'auto (readable on a terminal, JSON otherwise), json or pretty' },
] as const;

/** `coord run`'s own options, besides the ones above (--plugin and --role are lists). */
export const RUN_OPTIONS = [
  { flags: '--plugin <name>', description: 'Plugin: a built-in name or a module path (./my-plugin.js)' },
  { flags: '--role <role>', description: 'Role to start (repeatable); roles of one deployment share --redis and --prefix' },
] as const;

/** Every flag `coord run` takes itself, in the order its help lists them: a plugin's config.flags cannot take one. */
export const RUN_FLAGS: readonly string[] = [...RUN_OPTIONS, { flags: '--config' }, { flags: '--set' }, ...CONFIG_OPTIONS, { flags: '--help' }, { flags: '--version' }].map(
  (o) => o.flags.split(' ')[0]!.slice(2),
);

/** A plugin whose config.flags names one of coord run's own flags is a PluginError. */
export function checkRunFlags(plugin: Plugin): void {
  for (const flag of Object.keys(plugin.config.flags ?? {})) {
    if (RUN_FLAGS.includes(flag)) throw new PluginError(`plugin ${plugin.name}: config.flags has "${flag}", which coord run already takes (${RUN_FLAGS.join(', ')})`, { code: 'COORD_ERR_CLI_RUN_FLAG_TAKEN' });
  }
}

/** Adds --config, --set and the options above to a command, but those it already has (conformance's own --adapter). */
export function withConfigOptions(command: Command): Command {
  const own = new Set(command.options.map((o) => o.rawName.split(' ')[0]));
  command.option('--config <file>', 'Config file (JSON or YAML)');
  for (const o of CONFIG_OPTIONS) if (!own.has(o.flags.split(' ')[0]!)) command.option(o.flags, o.description);
  return command.option('--set <path=value>', 'Any config value, e.g. --set browser-grid.port=9000 (repeatable)', { type: [String] });
}

/** The config flags of parsed options, in the order loadConfig applies them. */
export function configFlags(options: Readonly<Record<string, unknown>>): ConfigFlag[] {
  const flags: ConfigFlag[] = [];
  for (const o of CONFIG_OPTIONS) {
    const name = camel(o.flags.split(' ')[0]!.slice(2));
    const value = text(options[name]);
    if (value !== undefined) flags.push({ path: o.path, value, flag: o.flags.split(' ')[0] });
  }
  const roles = list(options.role);
  if (roles.length) flags.push({ path: 'roles', value: roles, flag: '--role' });
  for (const set of list(options.set)) flags.push(parseSetFlag(set));
  return flags;
}

/** Adds the run flags plugins declare (config.flags); one flag shared by two plugins is added once. */
export function withPluginFlags(command: Command, plugins: readonly Plugin[]): Command {
  const added = new Set<string>();
  for (const plugin of plugins) {
    for (const [flag, path] of Object.entries(plugin.config.flags ?? {})) {
      if (added.has(flag)) continue;
      added.add(flag);
      const at = schemaAt(plugin.config.schema, path.split('.'));
      const description = at?.description;
      // A boolean is a switch: `--run-probes` alone means true (`--run-probes false` still works).
      command.option(at?.type === 'boolean' ? `--${flag} [value]` : `--${flag} <value>`, `${plugin.name}: ${typeof description === 'string' ? description : path} (= --set ${plugin.name}.${path}=…)`);
    }
  }
  return command;
}

/** The values of the plugins' run flags as config flags; they come before --set, which can override them. */
export function pluginFlags(options: Readonly<Record<string, unknown>>, plugins: readonly Plugin[]): ConfigFlag[] {
  return plugins.flatMap((plugin) =>
    Object.entries(plugin.config.flags ?? {}).flatMap(([flag, path]) => {
      const value = text(options[camel(flag)]);
      return value === undefined ? [] : [{ path: `${plugin.name}.${path}`, value, flag: `--${flag}` }];
    }),
  );
}

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_all, c: string) => c.toUpperCase());
}
