// The errors coord throws that a caller may catch and tell apart. Each has a
// stable `code` (as Fastify's FST_ERR_*): match on `err.code`, not on the
// message, which may be reworded. docs/errors.md lists them. Redis's own error
// replies are ReplyError (core/backend.ts), whose `code` is Redis's first word.

/** Every code coord's own errors carry. */
export type CoordErrorCode =
  | 'COORD_ERR_CONFIG'
  | 'COORD_ERR_PLUGIN'
  | 'COORD_ERR_USAGE'
  | 'COORD_ERR_START'
  | 'COORD_ERR_REDIS_URL'
  | 'COORD_ERR_MODULE_LOAD'
  | 'COORD_ERR_CONTRACT'
  | 'COORD_ERR_SCRIPT'
  | 'COORD_ERR_CONNECTION';

/**
 * What every coord error has: a `name` (its class) and a stable `code`.
 *
 * @example
 * try {
 *   loadConfig({ plugins: [plugin], file: 'coord.yaml' });
 * } catch (err) {
 *   if (err instanceof CoordError && err.code === 'COORD_ERR_CONFIG') console.error(err.message);
 *   else throw err;
 * }
 */
export abstract class CoordError extends Error {
  abstract readonly code: CoordErrorCode;
}

/** A config that cannot be used. The message is one line; `problems` lists each one. */
export class ConfigError extends CoordError {
  override readonly name = 'ConfigError';
  readonly code = 'COORD_ERR_CONFIG';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('; '));
    this.problems = problems;
  }
}

/** A plugin that cannot be registered: bad shape, wrong coord range, duplicate name… */
export class PluginError extends CoordError {
  override readonly name = 'PluginError';
  readonly code = 'COORD_ERR_PLUGIN';
}

/**
 * A command line that cannot be run: unknown command or plugin, a missing or
 * bad option. A plugin command throws it for bad input; the CLI prints its
 * message as one line and exits 2.
 */
export class UsageError extends CoordError {
  override readonly name = 'UsageError';
  readonly code = 'COORD_ERR_USAGE';
}

/** A role threw while starting; the roles started before it have been stopped. `cause` is what it threw. */
export class StartError extends CoordError {
  override readonly name = 'StartError';
  readonly code = 'COORD_ERR_START';
}

/** A Redis URL coord cannot use. */
export class UrlError extends CoordError {
  override readonly name = 'UrlError';
  readonly code = 'COORD_ERR_REDIS_URL';
}

/** A module the user names (plugin, scenario, worker) that does not load: `cannot load <label>: <why>`. */
export class ModuleLoadError extends CoordError {
  override readonly name = 'ModuleLoadError';
  readonly code = 'COORD_ERR_MODULE_LOAD';
}

/** A contract declaration that is not valid (defineContract). */
export class ContractError extends CoordError {
  override readonly name = 'ContractError';
  readonly code = 'COORD_ERR_CONTRACT';
}

/** A Lua script whose header or keys do not fit its contract, or a script call with wrong keys or arguments. */
export class ScriptError extends CoordError {
  override readonly name = 'ScriptError';
  readonly code = 'COORD_ERR_SCRIPT';
}

/** The backend could not be reached (refused, DNS, TLS, auth, closed). */
export class ConnectionError extends CoordError {
  override readonly name = 'ConnectionError';
  readonly code = 'COORD_ERR_CONNECTION';
}
