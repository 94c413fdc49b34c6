// coordkit's main entry: `import { … } from 'coordkit'`. The plugin object and
// what its roles get (context, contract, backend, logger, clock, scripts), the
// errors coord throws (each with a stable code), and the calls that check,
// configure and start plugins. Every public name is exported from exactly one
// entry; test/exports.test.ts holds the lists. Other entries: 'coordkit/embed'
// (more for applications that run coord in their own process),
// 'coordkit/adapter' (adapter authors), 'coordkit/load-test' (scenario
// authors), 'coordkit/conformance' (the suites), 'coordkit/adapters/<name>'
// (one backend's factory).

// The plugin object and its roles
export type { CommandTools, ConformanceScenario, GlobalConfig, Plugin, PluginCommand, Role, RoleContext, RoleFactory } from '../core/plugin.ts';

// Errors: match on `err.code` (COORD_ERR_*); docs/plugins.md lists them
export {
  CoordError,
  type CoordErrorCode,
  ConfigError,
  ConnectionError,
  ContractError,
  ModuleLoadError,
  PluginError,
  ScriptError,
  StartError,
  UrlError,
  UsageError,
} from '../core/errors.ts';
export type { TypedContext } from '../core/typed-context.ts';

// The contract: a plugin's keyspace as data
export type {
  ChannelBuilders,
  ChannelSpec,
  ContractSpec,
  HashKeySpec,
  JsonSchema,
  KeyBuilder,
  KeyBuilders,
  KeyParams,
  KeySpec,
  ListKeySpec,
  RedisType,
  SetKeySpec,
  StreamKeySpec,
  StringKeySpec,
  TtlRule,
  ValueSchema,
  ZsetKeySpec,
} from '../core/contract.ts';
export { channelBuilders, defineContract, keyBuilders } from '../core/contract.ts';

// What a role talks to
export type { Arg, Backend, PubSubMessage, Reply, Subscriber } from '../core/backend.ts';
export { ReplyError } from '../core/backend.ts';
export type { KeyInput, ScriptArg, ScriptCall, ScriptKey, ScriptRunner, ScriptShape, TypedCall, TypedScripts } from '../core/scripts.ts';
export type { Clock } from '../core/clock.ts';
export { systemClock } from '../core/clock.ts';
export type { Logger, LogLevel } from '../core/logger.ts';
export { memoryLogger, silentLogger } from '../core/logger.ts';

// Check, configure and start plugins (startProcess opens the backend the config names when none is given)
export { scriptTypesSource, writeScriptTypes } from '../core/script-types.ts';
export type { RegisteredPlugin } from '../core/runtime.ts';
export { registerPlugin } from '../core/runtime.ts';
export { startProcess } from './start-process.ts';
export type { ConfigInput, CoordConfig } from '../core/config.ts';
export { loadConfig } from '../core/config.ts';
export { createBackend } from '../adapters/index.ts';
