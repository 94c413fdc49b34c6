// What a plugin is: one object that names its contract, scripts, config
// schema and roles. The runtime (runtime.ts) checks it when it is registered
// and starts its roles; the conformance suite runs its scenarios.
import type { Backend } from './backend.ts';
import type { ConfigFlag, ConfigInput, CoordConfig } from './config.ts';
import type { ContractSpec, JsonSchema, KeyBuilders, KeySpec } from './contract.ts';
import type { Logger } from './logger.ts';
import type { Clock } from './clock.ts';
import type { StopSignal } from './platform.ts';
import type { ProcessHandle } from './runtime.ts';
import type { ScriptRunner } from './scripts.ts';

/**
 * A long-running part of a process: a proxy, a worker, a reaper… `start`
 * resolves once it serves; `stop` drains and resolves once it is done.
 *
 * @example
 * const greeter = (ctx: RoleContext<Config, Keys>): Role => ({
 *   async start() { await ctx.backend.send(['SET', ctx.keys.greeting(), 'hi']); },
 *   async stop() {},
 * });
 */
export interface Role {
  /** Starts the role; resolves when it is serving. */
  start(): Promise<void>;
  /**
   * Stops the role: stop taking new work, drain what is in flight, release
   * what it holds in Redis. `reason` is for the log ('SIGTERM', 'error: …').
   */
  stop(reason: string): Promise<void>;
  /**
   * Seconds this role's stop may take when that is longer than the process's
   * roleStopTimeout: a drain bounded by the plugin's own config (browser-grid's
   * drainTimeout) is not cut short. The runtime waits for the longer of the two.
   */
  readonly stopTimeout?: number;
}

/** Everything a role gets from the runtime. Tests build one with their own clock, logger and backend. */
export interface RoleContext<C = Record<string, unknown>, K extends Record<string, KeySpec> = Record<string, KeySpec>> {
  /** The plugin's own config section, validated and frozen. */
  readonly config: Readonly<C>;
  /** Settings shared by every plugin of the process (redis url, keyPrefix, …). */
  readonly global: Readonly<GlobalConfig>;
  readonly backend: Backend;
  /** Key builders of the plugin's contract, under the deployment's key prefix. */
  readonly keys: KeyBuilders<K>;
  /**
   * Builders of the contract's pub/sub channels, under the same prefix. Typed per
   * plugin by its TypedContext (core/typed-context.ts); `any` here so that the
   * runtime's context is every plugin's typed context.
   */
  readonly channels: any;
  /** The plugin's scripts, called by name with keys by name. */
  readonly scripts: ScriptRunner;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Aborted when the process is stopping. */
  readonly signal: AbortSignal;
  /** Names of the roles running in this process (a role may behave differently in standalone). */
  readonly roles: readonly string[];
  /**
   * Another role of this plugin in this process, as its factory returned it
   * (e.g. the webdriver proxy hands commands straight to the orchestrator's
   * nodes); undefined when it does not run here or is not made yet.
   */
  peer<R extends Role = Role>(role: string): R | undefined;
}

/**
 * The settings every plugin of a process shares, `ctx.global` in a role: the
 * Redis to meet on (URL, adapter, key prefix, Sentinel and TLS settings) and
 * how to log.
 */
export interface GlobalConfig {
  redis: {
    url?: string;
    adapter?: string;
    keyPrefix: string;
    /** File holding the password (read into url by loadConfig). */
    passwordFile?: string;
    /** Sentinel's config form: the sentinels (host:port) and the master's name (loadConfig makes them a redis+sentinel:// url). */
    sentinels?: string[];
    masterName?: string;
    /** The sentinels' own credentials (the url's are the data nodes'); the file is read into sentinelPassword by loadConfig. */
    sentinelUsername?: string;
    sentinelPassword?: string;
    sentinelPasswordFile?: string;
    /** TLS for rediss:// URLs: PEM files, the certificate's expected name, and whether to check it (default true). */
    tls?: { caFile?: string; certFile?: string; keyFile?: string; servername?: string; rejectUnauthorized?: boolean };
  };
  log: { level: 'debug' | 'info' | 'warn' | 'error'; format: 'auto' | 'json' | 'pretty' };
}

/**
 * Makes a role for one process. It may return a promise, so a plugin can
 * import the role's code only when the role starts (`coord --help` then loads
 * none of it).
 *
 * @example
 * roles: { worker: async (ctx) => (await import('./roles/worker.ts')).workerRole(ctx) }
 */
export type RoleFactory<C = any, K extends Record<string, KeySpec> = any> = (ctx: RoleContext<C, K>) => Role | Promise<Role>;

/**
 * One scenario for the contract conformance suite: drives the plugin's roles
 * or scripts against a backend so that the keyspace afterwards shows every
 * key the plugin writes. The suite snapshots the keyspace and validates it.
 */
export interface ConformanceScenario<C = any, K extends Record<string, KeySpec> = any> {
  name: string;
  /** Runs the scenario; resolves once the keyspace is in the state to be checked. */
  run(ctx: RoleContext<C, K>): Promise<void>;
  /** Contract entries this scenario must leave at least one key of (checked by the suite). */
  expects?: readonly (keyof K & string)[];
}

/**
 * A plugin: one object, checked by registerPlugin when it is loaded. Its
 * module's default export is what `coord run --plugin ./path` loads.
 *
 * @example
 * const plugin: Plugin<Config, Keys> = {
 *   name: 'greeter', version: '1.0.0', coord: '^0.1.0', description: 'says hi', contract,
 *   config: { schema: { type: 'object', properties: { who: { type: 'string', default: 'world' } } } },
 *   roles: { greeter: async (ctx) => (await import('./roles/greeter.ts')).greeterRole(ctx) },
 *   scenarios: async () => (await import('./scenarios.ts')).scenarios,
 * };
 * export default plugin;
 */
export interface Plugin<C = any, K extends Record<string, KeySpec> = any> {
  /** npm-style name: lower case, digits and dashes. */
  name: string;
  /** The plugin's own semver version. */
  version: string;
  /** Semver range of coord versions the plugin works with, e.g. '^0.1.0'. */
  coord: string;
  description: string;
  contract: ContractSpec<K>;
  /** Folder of the plugin's Lua scripts (plugins/<plugin>/lua/), as a file URL or path. */
  scripts?: string | URL;
  config: {
    /** JSON Schema of the plugin's config section, with defaults. */
    schema: JsonSchema;
    /** Environment variables read as config: ENV_NAME → path in the section ('maxConcurrentSessions'). */
    env?: Readonly<Record<string, string>>;
    /**
     * Flags `coord run` takes for this plugin: flag name → path in the section,
     * e.g. { worker: 'worker' } makes `--worker FILE` mean `--set obniz.worker=FILE`.
     * The help text is the schema's description of that path.
     */
    flags?: Readonly<Record<string, string>>;
    /** Cross-field checks ajv cannot express; return one message per problem ('path: what is wrong'). */
    check?: (config: C) => string[];
  };
  roles: Readonly<Record<string, RoleFactory<C, K>>>;
  /** Roles started by `coord run --plugin P` with no --role, in start order (default: all, in declaration order). */
  defaultRoles?: readonly string[];
  /**
   * Scenarios for the contract conformance suite: the list, or a function that
   * imports it when the suite runs (so loading the plugin stays cheap).
   */
  scenarios?: readonly ConformanceScenario<C, K>[] | (() => Promise<readonly ConformanceScenario<C, K>[]>);
  /** CLI commands the plugin adds. */
  commands?: readonly PluginCommand[];
}

export { PluginError, UsageError } from './errors.ts';

/** A CLI command a plugin adds, e.g. `coord grid status`. */
export interface PluginCommand {
  /** The words after `coord`, e.g. 'grid status'. */
  name: string;
  description: string;
  options?: readonly { flags: string; description: string; default?: unknown }[];
  /** Returns the exit code (0 when omitted). */
  run(options: Readonly<Record<string, unknown>>, args: readonly string[], tools: CommandTools): Promise<number | void>;
}

/** What the CLI gives a plugin command. */
export interface CommandTools {
  /**
   * A role context on the deployment named by the usual flags and config
   * (--redis, --prefix, --config, env): the plugin's config section, keys,
   * scripts and backend. Close it when done.
   */
  connect(): Promise<RoleContext & { close(): Promise<void> }>;
  /**
   * The same deployment as loadConfig (core/config.ts) takes it, all but the
   * plugins: the --config file, the environment, and the flags --redis,
   * --prefix, --set… in the order they apply. A command that starts roles of
   * its own calls loadConfig() below, then start(config); connect() is enough
   * for the rest.
   */
  readonly configInput: Readonly<Omit<ConfigInput, 'plugins'>>;
  /**
   * The config the command line names (configInput), validated and filled
   * with its defaults, for `plugins` (default: this command's plugin), as
   * `coord run` loads it: throws ConfigError for a value that cannot be used.
   * A command adds settings of its own as flags: `before` apply before the
   * command line's (so --set and the other flags override them), `after`
   * apply after them (they override the command line).
   */
  loadConfig(options?: { plugins?: readonly Plugin[]; before?: readonly ConfigFlag[]; after?: readonly ConfigFlag[] }): CoordConfig;
  /**
   * Starts roles in this process, as `coord run` does: startRoles with this
   * plugin (or `plugins`) on the backend config.redis names, or on `backend`
   * (one a process started before uses, e.g. `first.backend`); log lines go
   * to standard error, since standard output is the command's result. Stop
   * the handle when done.
   */
  start(config: Readonly<CoordConfig>, options?: { backend?: Backend; plugins?: readonly Plugin[] }): Promise<ProcessHandle>;
  /**
   * Calls `handler` on the first SIGINT or SIGTERM; a second one exits the
   * process at once with 128 + its number (130, 143), as shells report it.
   * Returns a function that removes the handler.
   */
  onStop(handler: (signal: StopSignal) => void): () => void;
  /** Writes a line to stdout. */
  print(line: string): void;
  /** Writes a line to stderr (a message beside the result). */
  printErr(line: string): void;
  /** A progress line on standard error: rewritten in place on a terminal, one line each otherwise; no line ends the progress. */
  progress(line?: string): void;
  /** Rows as aligned columns under `head` and a rule; numbers right-aligned. For print(). */
  table(head: readonly string[], rows: readonly (readonly (string | number)[])[]): string;
}

/**
 * A plugin's conformance scenarios, imported first when it declares them as a
 * function. For a harness of one's own (contractSuite runs them itself).
 *
 * @example
 * const backend = await createBackend({});
 * for (const scenario of await pluginScenarios(plugin)) {
 *   await scenario.run(scenarioContext({ plugin, backend, keyPrefix: '{t}:', signal: AbortSignal.timeout(30_000) }));
 * }
 * console.log(formatDeviations(checkSnapshot(plugin.contract, await snapshotKeyspace(backend, { keyPrefix: '{t}:' }), { keyPrefix: '{t}:' })));
 */
export async function pluginScenarios<C, K extends Record<string, KeySpec>>(plugin: Plugin<C, K>): Promise<readonly ConformanceScenario<C, K>[]> {
  const scenarios = plugin.scenarios;
  return typeof scenarios === 'function' ? scenarios() : (scenarios ?? []);
}
