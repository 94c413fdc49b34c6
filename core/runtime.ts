// The plugin and role runtime: checks plugins when they are registered, wires
// one process (a container per process, a child per plugin), starts its roles
// in order and stops them in reverse. Signals are the CLI's business: the
// library only offers `handle.stop(reason)`. The backend is the caller's
// (a Backend, or a function that opens one): core knows no adapter.
import type Semver from 'semver';
import { createAjv } from './ajv.ts';
import type { Backend } from './backend.ts';
import { systemClock, type Clock } from './clock.ts';
import { CONFIG_SECTIONS, schemaAt, type CoordConfig } from './config.ts';
import { knownToCompile } from './config-validator.ts';
import { lazyModule } from './lazy-module.ts';
import { defineContract } from './contract.ts';
import { processContainer, tokens, type DependencyContainer } from './di.ts';
import { silentLogger, type Logger } from './logger.ts';
import { PluginError, type GlobalConfig, type Plugin, type Role } from './plugin.ts';
import { roleContext } from './role-context.ts';
import { loadScriptDir, type ScriptDefinition } from './scripts.ts';
import { coordVersion } from './version.ts';
import { ConfigError, type CoordErrorCode, StartError } from './errors.ts';
import { clusterPrefixProblems, pluginKeyPrefix } from './key-prefix.ts';
import { closeWhenUnreachable } from './stop-without-redis.ts';

// The three semver functions a plugin's check uses, each required alone: the
// package's index loads all of its forty (a start of coord run paid for them).
const validVersion = lazyModule<typeof Semver.valid>('semver/functions/valid');
const validRange = lazyModule<typeof Semver.validRange>('semver/ranges/valid');
const satisfies = lazyModule<typeof Semver.satisfies>('semver/functions/satisfies');

/** A plugin that passed every check, with its scripts parsed. */
export interface RegisteredPlugin {
  readonly plugin: Plugin;
  readonly scripts: readonly ScriptDefinition[];
}

export { StartError } from './errors.ts';

/** What a plugin's name must look like (npm-style: lower case letters, digits and dashes). */
export const PLUGIN_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const ROLE_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/**
 * Checks a plugin object and parses its scripts. Throws PluginError with a
 * message that names the plugin and the one thing that is wrong.
 *
 * @example
 * t.test('coord accepts the plugin', async (t) => t.doesNotThrow(() => registerPlugin(plugin)));
 */
export function registerPlugin(candidate: unknown): RegisteredPlugin {
  if (!isObject(candidate)) {
    throw new PluginError(`not a plugin: expected an object with name, version, coord, contract, config and roles, got ${kind(candidate)}`, { code: 'COORD_ERR_PLUGIN_SHAPE' });
  }
  const p = candidate as unknown as Plugin;
  const rawName: unknown = p.name;
  if (typeof rawName !== 'string' || !PLUGIN_NAME.test(rawName)) {
    throw new PluginError(`plugin name ${JSON.stringify(rawName)} is not valid: expected lower case letters, digits and dashes, e.g. "browser-grid"`, { code: 'COORD_ERR_PLUGIN_NAME' });
  }
  const name = rawName;
  // The kind code (COORD_ERR_PLUGIN) is a plugin object of the wrong shape; the conditions below have their own.
  const fail = (what: string, code?: CoordErrorCode): never => {
    throw new PluginError(`plugin ${name}: ${what}`, { code });
  };
  if (CONFIG_SECTIONS.includes(name)) fail(`the name is reserved (${CONFIG_SECTIONS.join(', ')} are config sections)`, 'COORD_ERR_PLUGIN_NAME');
  if (typeof p.version !== 'string' || validVersion()(p.version) === null) fail(`version ${JSON.stringify(p.version)} is not a semver version such as 1.2.3`, 'COORD_ERR_PLUGIN_VERSION');
  if (typeof p.coord !== 'string' || validRange()(p.coord) === null) fail(`coord ${JSON.stringify(p.coord)} is not a semver range such as ^0.1.0`, 'COORD_ERR_PLUGIN_VERSION');
  if (!satisfies()(coordVersion, p.coord, { includePrerelease: true })) fail(`needs coord ${p.coord}, but this is coord ${coordVersion}`, 'COORD_ERR_PLUGIN_COORD_RANGE');
  if (typeof p.description !== 'string' || !p.description.trim()) fail('description is missing: one sentence on what the plugin does');

  if (!isObject(p.contract)) fail('contract is missing: declare the keyspace with defineContract({...})');
  if (p.contract.plugin !== name) fail(`contract belongs to plugin ${JSON.stringify(p.contract.plugin)}, expected "${name}"`);
  try {
    defineContract(p.contract);
  } catch (err) {
    fail(`bad contract: ${message(err)}`, 'COORD_ERR_PLUGIN_CONTRACT');
  }

  let scripts: ScriptDefinition[] = [];
  if (p.scripts !== undefined) {
    try {
      scripts = loadScriptDir(p.scripts, p.contract);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      fail(code === 'ENOENT' ? `scripts folder ${String(p.scripts)} does not exist` : `bad script: ${message(err)}`, 'COORD_ERR_PLUGIN_SCRIPTS');
    }
  }

  checkConfig(p, fail);

  if (!isObject(p.roles) || Object.keys(p.roles).length === 0) fail('declares no roles: expected roles: { name: (ctx) => Role }');
  for (const [role, factory] of Object.entries(p.roles)) {
    if (!ROLE_NAME.test(role)) fail(`role name "${role}" is not valid: expected letters, digits, _ and -`);
    if (typeof factory !== 'function') fail(`role ${role} is not a function (ctx) => Role`);
  }
  if (p.defaultRoles !== undefined) {
    if (!Array.isArray(p.defaultRoles) || p.defaultRoles.length === 0) fail('defaultRoles must be a non-empty list of role names');
    for (const role of p.defaultRoles) if (!(role in p.roles)) fail(`defaultRoles names "${role}", which is not one of its roles (${Object.keys(p.roles).join(', ')})`);
  }
  if (p.scenarios !== undefined && typeof p.scenarios !== 'function' && !Array.isArray(p.scenarios)) fail('scenarios must be a list, or a function that resolves to one');
  for (const [i, scenario] of (Array.isArray(p.scenarios) ? p.scenarios : []).entries()) {
    if (!isObject(scenario) || typeof scenario.name !== 'string' || typeof scenario.run !== 'function') fail(`scenarios[${i}] needs a name and a run(ctx) function`);
  }
  for (const [i, command] of (p.commands ?? []).entries()) {
    if (!isObject(command) || typeof command.name !== 'string' || !command.name.trim() || typeof command.run !== 'function') {
      fail(`commands[${i}] needs a name, a description and a run(options, args) function`);
    }
  }
  return Object.freeze({ plugin: p, scripts: Object.freeze(scripts) });
}

function checkConfig(p: Plugin, fail: (what: string, code?: CoordErrorCode) => never): void {
  if (!isObject(p.config) || !isObject(p.config.schema)) fail('config.schema is missing: a JSON Schema of the plugin\'s config section, with defaults');
  const schema = p.config.schema;
  if (schema.type !== 'object') fail(`config.schema must describe an object (type: 'object'), got type ${JSON.stringify(schema.type)}`);
  try {
    if (!knownToCompile(schema)) createAjv({ useDefaults: true }).compile(schema); // loadConfig compiled it already, as a rule
  } catch (err) {
    fail(`config.schema does not compile: ${message(err)}`, 'COORD_ERR_PLUGIN_CONFIG_SCHEMA');
  }
  for (const [env, path] of Object.entries(p.config.env ?? {})) {
    if (!schemaAt(schema, path.split('.'))) fail(`config.env maps ${env} to "${path}", which is not a property of config.schema`);
  }
  for (const [flag, path] of Object.entries(p.config.flags ?? {})) {
    if (!/^[a-z][a-z0-9-]*$/.test(flag)) fail(`config.flags has "${flag}": a flag name is lower case letters, digits and dashes, without the leading --`);
    if (!schemaAt(schema, path.split('.'))) fail(`config.flags maps --${flag} to "${path}", which is not a property of config.schema`);
  }
  if (p.config.check !== undefined && typeof p.config.check !== 'function') fail('config.check must be a function (config) => string[]');
}

/** Opens the process's backend from config.redis and resolves once it answers; the process closes it when it stops. */
export type OpenBackend = (redis: Readonly<GlobalConfig['redis']>, logger: Logger) => Promise<Backend>;

/**
 * What startProcess takes: the plugins, the config loadConfig made for them,
 * and optionally the backend, logger, clock or a container that provides them
 * (what is not given comes from the container, else the defaults).
 */
export interface StartOptions {
  plugins: readonly Plugin[];
  /** From loadConfig: validated and frozen. */
  config: Readonly<CoordConfig>;
  /**
   * The roles' backend: a Backend the caller keeps (stop does not close it),
   * or a function that opens one from config.redis (stop closes it, and
   * closes it early once Redis has been unreachable for 3 s of a stop, so the
   * roles' stops do not wait on Redis calls nobody answers; e.g.
   * connectBackend from 'coordkit/embed'). Without it, the one registered
   * under tokens.Backend in `container`.
   */
  backend?: Backend | OpenBackend;
  /** Without it: tokens.Logger in `container`, else no logging. */
  logger?: Logger;
  /** Without it: tokens.Clock in `container`, else the system clock. */
  clock?: Clock;
  /**
   * The caller's container (e.g. processContainer()): what it registers under
   * tokens.Clock, tokens.Logger or tokens.Backend, the roles get. The process
   * runs in a child of it (the caller's registrations are not changed), each
   * plugin in a child of that.
   */
  container?: DependencyContainer;
  /**
   * Called with each plugin's own container before its roles are made:
   * register there (tokens.Clock, tokens.Logger, tokens.Backend) what only
   * that plugin's roles get.
   */
  configurePlugin?(plugin: Plugin, container: DependencyContainer): void;
}

/** One role a process started: its plugin and its name. */
export interface RunningRole {
  readonly plugin: string;
  readonly role: string;
}

/**
 * A running process, as startProcess returns it: the roles it started, what it
 * runs with (config, backend, container), a signal aborted when it stops, and
 * stop().
 */
export interface ProcessHandle {
  /** The roles started, in start order. */
  readonly roles: readonly RunningRole[];
  /**
   * The started role `role` of `plugin`, as its factory returned it (a plugin
   * may offer more on it: the load-test orchestrator its test controller);
   * undefined when it does not run here.
   */
  role<R extends Role = Role>(plugin: string, role: string): R | undefined;
  readonly config: Readonly<CoordConfig>;
  readonly backend: Backend;
  /** The process's container (tokens.Clock, tokens.Logger, tokens.Backend, tokens.Config). */
  readonly container: DependencyContainer;
  /** Aborted when the process starts stopping; every role's ctx.signal. */
  readonly signal: AbortSignal;
  /**
   * Stops the roles in reverse start order (each awaited up to
   * config.roleStopTimeout seconds; an error or a stop past that is logged,
   * not thrown), then closes the backend the runtime opened — early, once Redis
   * has been unreachable for 3 s of the stop: the roles' calls then fail with
   * ConnectionError (COORD_ERR_BACKEND_CLOSED) instead of waiting for Redis.
   * Idempotent: every call returns the same promise.
   */
  stop(reason: string): Promise<void>;
}

/**
 * Starts one process's roles on the backend given (core knows no adapter:
 * startProcess from 'coordkit' wires the built-in ones): the roles given by config.roles (or each plugin's
 * default roles) in the plugin's order. If a role fails to start, or does
 * not start within config.roleStartTimeout seconds, the ones already started
 * are stopped and StartError is thrown (code COORD_ERR_ROLE_START_TIMEOUT for
 * the latter). An unreachable Redis throws ConnectionError before any role
 * starts.
 */
export async function startRoles(options: StartOptions): Promise<ProcessHandle> {
  const { config } = options;
  const registered = options.plugins.map(registerPlugin);
  const seen = new Set<string>();
  for (const { plugin } of registered) {
    if (seen.has(plugin.name)) throw new PluginError(`plugin ${plugin.name} is registered twice`, { code: 'COORD_ERR_PLUGIN_DUPLICATE' });
    seen.add(plugin.name);
  }
  const plan = registered.flatMap((r) => rolesToStart(r.plugin, config.roles).map((role) => ({ ...r, role })));
  if (plan.length === 0) {
    throw new StartError(`no role to start: none of ${config.roles.join(', ')} belongs to ${registered.map((r) => r.plugin.name).join(', ')}`, { code: 'COORD_ERR_START_NO_ROLE' });
  }

  // The caller's registrations are defaults; the options given here win over them.
  const root = processContainer(options.container);
  if (options.clock || !root.isRegistered(tokens.Clock, true)) root.register(tokens.Clock, { useValue: options.clock ?? systemClock });
  if (options.logger || !root.isRegistered(tokens.Logger, true)) root.register(tokens.Logger, { useValue: options.logger ?? silentLogger });
  root.register(tokens.Config, { useValue: config });
  // The plugins' containers before the backend: a configurePlugin that throws leaves nothing open.
  const perPlugin = new Map(
    registered.map(({ plugin, scripts }) => {
      const child = root.createChildContainer();
      child.register(tokens.Plugin, { useValue: plugin });
      child.register(tokens.Scripts, { useValue: scripts });
      child.register(tokens.PluginConfig, { useValue: config.plugins[plugin.name] ?? Object.freeze({}) });
      options.configurePlugin?.(plugin, child);
      return [plugin.name, child] as const;
    }),
  );

  const logger = root.resolve<Logger>(tokens.Logger);
  let owned: Backend | undefined;
  if (typeof options.backend === 'function') owned = await options.backend(config.redis, logger);
  // Only a backend the runtime opened is closed early (a caller's is the caller's to close).
  const withoutRedis = owned && closeWhenUnreachable(owned, logger);
  if (options.backend) root.register(tokens.Backend, { useValue: owned ?? options.backend });
  else if (!root.isRegistered(tokens.Backend, true)) {
    throw new StartError("no backend: pass backend (a Backend, or a function that opens one such as connectBackend from 'coordkit/embed') or register tokens.Backend in the container", {
      code: 'COORD_ERR_START_NO_BACKEND',
    });
  }
  const backend = root.resolve<Backend>(tokens.Backend);
  if (backend.capabilities.cluster) {
    // Refused before any role starts: without a hash tag the first script call fails with CROSSSLOT, after "ready".
    const problems = clusterPrefixProblems(registered.map(({ plugin }) => pluginKeyPrefix(config, plugin.name)));
    if (problems.length) {
      withoutRedis?.dispose();
      if (owned) await owned.close().catch(() => {});
      throw new ConfigError(problems, { code: 'COORD_ERR_CONFIG_CLUSTER_PREFIX' });
    }
  }

  const controller = new AbortController();
  const global: Readonly<GlobalConfig> = Object.freeze({ redis: config.redis, log: config.log });
  const roleNames = plan.map((p) => p.role);
  const made = new Map<string, Role>(); // 'plugin/role' → what its factory returned
  const started: { plugin: string; role: string; instance: Role; logger: Logger }[] = [];

  // A role that hangs must not hang the process (avvio bounds plugins the same way).
  const startSeconds = config.roleStartTimeout ?? DEFAULT_ROLE_START_TIMEOUT;
  const stopSeconds = config.roleStopTimeout ?? DEFAULT_ROLE_STOP_TIMEOUT;

  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> =>
    (stopping ??= (async () => {
      controller.abort(new Error(`stopping: ${reason}`));
      withoutRedis?.stopping();
      for (const r of [...started].reverse()) {
        const name = `role ${r.role} of plugin ${r.plugin}`;
        const own = (r.instance.stopTimeout ?? 0) > stopSeconds;
        const seconds = own ? r.instance.stopTimeout! : stopSeconds;
        try {
          const outcome = await within(Promise.resolve().then(() => r.instance.stop(reason)), seconds);
          if (outcome === LATE) {
            // Logged, not thrown: the other roles still get their stop, and the process still ends.
            r.logger.error(`${name} did not stop within ${seconds} s (${own ? 'its stopTimeout' : 'roleStopTimeout'}); going on with the others`, { reason, code: 'COORD_ERR_ROLE_STOP_TIMEOUT' });
          } else r.logger.info('role stopped', { reason });
        } catch (err) {
          r.logger.error('role failed to stop', { reason, error: message(err) });
        }
      }
      withoutRedis?.dispose();
      if (owned) await owned.close().catch((err: unknown) => logger.error('backend did not close', { error: message(err) }));
      logger.debug('process stopped', { reason });
    })());

  for (const { plugin, role } of plan) {
    const scope = perPlugin.get(plugin.name)!;
    const roleLogger = scope.resolve<Logger>(tokens.Logger).child({ plugin: plugin.name, role });
    const name = `role ${role} of plugin ${plugin.name}`;
    let instance: Role | typeof LATE;
    try {
      const ctx = roleContext({
        plugin: scope.resolve<Plugin>(tokens.Plugin),
        scripts: scope.resolve<ScriptDefinition[]>(tokens.Scripts),
        config: scope.resolve<Record<string, unknown>>(tokens.PluginConfig),
        global,
        backend: scope.resolve<Backend>(tokens.Backend),
        logger: roleLogger,
        clock: scope.resolve<Clock>(tokens.Clock),
        signal: controller.signal,
        roles: roleNames,
        peer: (name) => made.get(`${plugin.name}/${name}`),
      });
      const starting = (async () => {
        const created = await plugin.roles[role]!(ctx);
        made.set(`${plugin.name}/${role}`, created);
        await created.start();
        return created;
      })();
      instance = await within(starting, startSeconds);
    } catch (err) {
      roleLogger.error('role failed to start', { error: message(err) });
      await stop(`${name} failed to start`);
      throw new StartError(`${name} failed to start: ${message(err)}`, { cause: err });
    }
    if (instance === LATE) {
      const why = `${name} did not start within ${startSeconds} s (roleStartTimeout)`;
      roleLogger.error(why);
      await stop(why); // also aborts ctx.signal, which the hung start may be waiting on
      throw new StartError(`${why}; the roles started before it were stopped`, { code: 'COORD_ERR_ROLE_START_TIMEOUT' });
    }
    started.push({ plugin: plugin.name, role, instance, logger: roleLogger });
    roleLogger.info('role started');
  }

  return {
    roles: Object.freeze(started.map(({ plugin, role }) => Object.freeze({ plugin, role }))),
    role: <R extends Role>(plugin: string, role: string) => started.find((r) => r.plugin === plugin && r.role === role)?.instance as R | undefined,
    config,
    backend,
    container: root,
    signal: controller.signal,
    stop,
  };
}

/** Seconds a role may take to start or stop when the config does not say (config.ts's schema has the same defaults). */
const DEFAULT_ROLE_START_TIMEOUT = 60;
const DEFAULT_ROLE_STOP_TIMEOUT = 30;

const LATE = Symbol('late');

/**
 * What `work` resolves to, or LATE once `seconds` have passed first. Whatever
 * `work` does after that is ignored; its rejection before that is thrown.
 */
async function within<T>(work: Promise<T>, seconds: number): Promise<T | typeof LATE> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), seconds * 1000);
  });
  work.catch(() => {}); // a rejection after LATE is nobody's
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The roles of `plugin` to start, in the plugin's order: defaultRoles first, then the rest as declared. */
export function rolesToStart(plugin: Plugin, requested: readonly string[]): string[] {
  const declared = Object.keys(plugin.roles);
  if (requested.length === 0) return [...(plugin.defaultRoles ?? declared)];
  const order = [...new Set([...(plugin.defaultRoles ?? []), ...declared])];
  return order.filter((role) => requested.includes(role));
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
