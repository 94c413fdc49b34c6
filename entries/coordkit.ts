// coordkit's main entry, for plugin authors: `import { … } from 'coordkit'`.
// The plugin object and what its roles get (context, contract, backend, logger,
// clock, scripts), and the few calls a plugin's own tests make. Each name is
// listed here on purpose; test/exports.test.ts holds the list. Other entries:
// 'coordkit/embed' (embedding applications), 'coordkit/adapter' (adapter
// authors), 'coordkit/load-test' (scenario authors), 'coordkit/conformance'
// (the suites), 'coordkit/adapters' and 'coordkit/adapters/<name>' (backends).

// The plugin object and its roles
export type { CommandTools, ConformanceScenario, GlobalConfig, Plugin, PluginCommand, Role, RoleContext, RoleFactory } from '../core/plugin.ts';
export { PluginError, UsageError } from '../core/plugin.ts';
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
export { channelBuilders, ContractError, defineContract, keyBuilders } from '../core/contract.ts';

// What a role talks to
export type { Arg, Backend, PubSubMessage, Reply, Subscriber } from '../core/backend.ts';
export { ConnectionError, ReplyError } from '../core/backend.ts';
export type { KeyInput, ScriptArg, ScriptCall, ScriptKey, ScriptRunner, ScriptShape, TypedCall, TypedScripts } from '../core/scripts.ts';
export { ScriptError } from '../core/scripts.ts';
export type { Clock } from '../core/clock.ts';
export { systemClock } from '../core/clock.ts';
export type { Logger, LogLevel } from '../core/logger.ts';
export { memoryLogger, silentLogger } from '../core/logger.ts';

// What a plugin's own tests call (startProcess opens the backend the config names when none is given)
export { scriptTypesSource, writeScriptTypes } from '../core/script-types.ts';
export { registerPlugin } from '../core/runtime.ts';
export { startProcess } from './embed.ts';
export { loadConfig } from '../core/config.ts';
export { createBackend } from '../adapters/index.ts';
