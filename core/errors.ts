// The errors coord throws that a caller may catch and tell apart. Each has a
// stable `code` (as Fastify's FST_ERR_*): match on `err.code`, not on the
// message, which may be reworded. docs/errors.md lists them. Redis's own error
// replies are ReplyError (core/backend.ts), whose `code` is Redis's first word.

/**
 * A code: `COORD_ERR_<AREA>_<CONDITION>`. Each condition a user can meet has
 * its own (docs/errors.md lists them all, and test/error-codes.test.ts holds
 * the list and the code to each other); the class says the kind.
 */
export type CoordErrorCode = `COORD_ERR_${string}`;

/** What a coord error is made with beyond its message: the condition's code and what caused it. */
export interface CoordErrorOptions {
  code?: CoordErrorCode;
  cause?: unknown;
}

/**
 * What every coord error has: a `name` (its class) and a stable `code`.
 * A plugin's own errors extend it, passing the code of their kind.
 *
 * @example
 * try {
 *   loadConfig({ plugins: [plugin], file: 'coord.yaml' });
 * } catch (err) {
 *   if (err instanceof ConfigError) console.error(err.code, err.message);
 *   else throw err;
 * }
 *
 * @example
 * class QuotaError extends CoordError {
 *   override readonly name = 'QuotaError';
 *   constructor(message: string, options?: CoordErrorOptions) {
 *     super(message, 'COORD_ERR_MYPLUGIN_QUOTA', options);
 *   }
 * }
 */
export abstract class CoordError extends Error {
  readonly code: CoordErrorCode;
  /** `kindCode` is the code when `options.code` names no narrower condition. */
  protected constructor(message: string, kindCode: CoordErrorCode, options: CoordErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? kindCode;
  }
}

/**
 * A config that cannot be used. The message is one line; `problems` lists each
 * one. loadConfig throws it for a value, file, `--set` or environment variable
 * that does not fit; a plugin throws it for a setting it can only check when a
 * role starts, with a code of its own.
 *
 * @example
 * if (!ctx.config.worker) {
 *   throw new ConfigError('cron.worker is not set: a runner needs a worker module (--set cron.worker=./worker.js)', { code: 'COORD_ERR_CRON_WORKER_UNSET' });
 * }
 *
 * @example
 * try {
 *   loadConfig({ plugins: [plugin], file: 'coord.yaml' });
 * } catch (err) {
 *   if (!(err instanceof ConfigError)) throw err;
 *   for (const problem of err.problems) console.error(problem);
 * }
 */
export class ConfigError extends CoordError {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];
  /** One problem, or several (joined by "; " in the message). */
  constructor(problems: string | readonly string[], options?: CoordErrorOptions) {
    const list = typeof problems === 'string' ? [problems] : [...problems];
    super(list.join('; '), 'COORD_ERR_CONFIG', options);
    this.problems = list;
  }
}

/**
 * A plugin that cannot be registered: bad shape, wrong coord range, duplicate
 * name… registerPlugin throws it, naming the plugin and the one thing wrong.
 *
 * @example
 * try {
 *   registerPlugin(candidate);
 * } catch (err) {
 *   if (err instanceof PluginError) console.error(err.message); // 'plugin cron: …'
 *   else throw err;
 * }
 */
export class PluginError extends CoordError {
  override readonly name = 'PluginError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_PLUGIN', options);
  }
}

/**
 * A command line that cannot be run: unknown command or plugin, a missing or
 * bad option. A plugin command throws it for bad input; the CLI prints its
 * message as one line and exits 2.
 *
 * @example
 * async run(options, args, tools) {
 *   const job = optionText(options.job);
 *   if (!job) throw new UsageError('cron run-now needs --job NAME');
 *   // …
 * }
 */
export class UsageError extends CoordError {
  override readonly name = 'UsageError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_USAGE', options);
  }
}

/**
 * A role threw while starting; the roles started before it have been stopped.
 * `cause` is what it threw. startProcess rejects with it.
 *
 * @example
 * try {
 *   await startProcess({ plugins: [plugin], config });
 * } catch (err) {
 *   if (err instanceof StartError) console.error(err.message, err.cause);
 *   else throw err;
 * }
 */
export class StartError extends CoordError {
  override readonly name = 'StartError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_START', options);
  }
}

/**
 * A Redis URL coord cannot use (parseRedisUrl, createBackend, loadConfig).
 *
 * @example
 * try {
 *   parseRedisUrl('http://127.0.0.1:6379');
 * } catch (err) {
 *   if (err instanceof UrlError) console.error(err.message); // names the URL (password masked) and what was expected
 *   else throw err;
 * }
 */
export class UrlError extends CoordError {
  override readonly name = 'UrlError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_REDIS_URL', options);
  }
}

/**
 * A module the user names (plugin, scenario, worker) that does not load:
 * `cannot load <label>: <why>`. importModule throws it; a plugin throws it, with
 * a code of its own, for a module that loads but exports the wrong thing.
 *
 * @example
 * const module = await importModule(spec, `worker ${spec}`);
 * if (typeof module.default !== 'function') {
 *   throw new ModuleLoadError(`cannot load worker ${spec}: it has no default export`, { code: 'COORD_ERR_CRON_WORKER_EXPORT' });
 * }
 */
export class ModuleLoadError extends CoordError {
  override readonly name = 'ModuleLoadError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_MODULE_LOAD', options);
  }
}

/**
 * A contract declaration that is not valid (defineContract), or a key built
 * with a parameter missing or not matching its rule (`ctx.keys`, keyBuilders).
 *
 * @example
 * try {
 *   keyBuilders(contract).job({ name: '' });
 * } catch (err) {
 *   if (err instanceof ContractError) console.error(err.message); // 'key pattern job:{name}: parameter "name" is missing'
 *   else throw err;
 * }
 */
export class ContractError extends CoordError {
  override readonly name = 'ContractError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_CONTRACT', options);
  }
}

/**
 * A Lua script whose header or keys do not fit its contract, or a script call
 * with wrong keys or arguments. registerPlugin and loadScriptDir throw it for a
 * script; `ctx.scripts.run` for a call.
 *
 * @example
 * try {
 *   await ctx.scripts.run('claimTick', { keys: {} });
 * } catch (err) {
 *   if (err instanceof ScriptError) console.error(err.message); // 'script claimTick: key "due" was not passed'
 *   else throw err;
 * }
 */
export class ScriptError extends CoordError {
  override readonly name = 'ScriptError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_SCRIPT', options);
  }
}

/**
 * The backend could not be reached (refused, DNS, TLS, auth, closed).
 * `backend.ready()` rejects with it; an adapter throws it for a call on a
 * connection that is gone.
 *
 * @example
 * const backend = await createBackend({ url: 'redis://127.0.0.1:6379' });
 * try {
 *   await backend.ready();
 * } catch (err) {
 *   if (err instanceof ConnectionError) console.error(`no Redis: ${err.message}`);
 *   await backend.close();
 *   throw err;
 * }
 */
export class ConnectionError extends CoordError {
  override readonly name = 'ConnectionError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_CONNECTION', options);
  }
}
