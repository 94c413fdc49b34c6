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

/** A config that cannot be used. The message is one line; `problems` lists each one. */
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

/** A plugin that cannot be registered: bad shape, wrong coord range, duplicate name… */
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
 */
export class UsageError extends CoordError {
  override readonly name = 'UsageError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_USAGE', options);
  }
}

/** A role threw while starting; the roles started before it have been stopped. `cause` is what it threw. */
export class StartError extends CoordError {
  override readonly name = 'StartError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_START', options);
  }
}

/** A Redis URL coord cannot use. */
export class UrlError extends CoordError {
  override readonly name = 'UrlError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_REDIS_URL', options);
  }
}

/** A module the user names (plugin, scenario, worker) that does not load: `cannot load <label>: <why>`. */
export class ModuleLoadError extends CoordError {
  override readonly name = 'ModuleLoadError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_MODULE_LOAD', options);
  }
}

/** A contract declaration that is not valid (defineContract). */
export class ContractError extends CoordError {
  override readonly name = 'ContractError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_CONTRACT', options);
  }
}

/** A Lua script whose header or keys do not fit its contract, or a script call with wrong keys or arguments. */
export class ScriptError extends CoordError {
  override readonly name = 'ScriptError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_SCRIPT', options);
  }
}

/** The backend could not be reached (refused, DNS, TLS, auth, closed). */
export class ConnectionError extends CoordError {
  override readonly name = 'ConnectionError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_CONNECTION', options);
  }
}
