// coordkit's main entry, for plugin authors: `import { … } from 'coordkit'`.
// The plugin object and what its roles get (context, contract, backend, logger,
// clock, scripts), and the few calls a plugin's own tests make. Each name is
// listed here on purpose; test/exports.test.ts holds the list. Other entries:
// 'coordkit/embed' (embedding applications), 'coordkit/adapter' (adapter
// authors), 'coordkit/load-test' (scenario authors), 'coordkit/conformance'
// (the suites), 'coordkit/adapters' and 'coordkit/adapters/<name>' (backends).

// The plugin object and its roles
export type { CommandTools, ConformanceScenario, GlobalConfig, Plugin, PluginCommand, Role, RoleContext, RoleFactory } from './plugin.ts';
export type { TypedContext } from './typed-context.ts';
export { PluginError, UsageError } from './plugin.ts';

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
} from './contract.ts';
export { channelBuilders, ContractError, defineContract, keyBuilders } from './contract.ts';

// What a role talks to
export type { Arg, Backend, PubSubMessage, Reply, Subscriber } from './backend.ts';
export { ConnectionError, ReplyError } from './backend.ts';
export type { KeyInput, ScriptArg, ScriptCall, ScriptKey, ScriptRunner, ScriptShape, TypedCall, TypedScripts } from './scripts.ts';
export { ScriptError } from './scripts.ts';
export type { Clock } from './clock.ts';
export { systemClock } from './clock.ts';
export type { Logger, LogLevel } from './logger.ts';
export { memoryLogger, silentLogger } from './logger.ts';

// What a plugin's own tests call
export { scriptTypesSource, writeScriptTypes } from './script-types.ts';
export { registerPlugin, startProcess } from './runtime.ts';
export { loadConfig } from './config.ts';
export { createBackend } from '../adapters/index.ts';
