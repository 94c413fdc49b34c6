// coordkit's plugin kit: `import { defineContract, type Plugin } from 'coordkit/plugin'`.
// Everything a plugin's own code needs — the plugin object and its roles, the
// contract, the backend's types, scripts, errors, and the small helpers the
// built-in plugins use — and nothing that is heavy to load (no DI container,
// no config validator, no Redis client): a worker thread or a user's plugin
// pays a few milliseconds for it. The built-in plugins import this entry and
// no other part of coord (test/plugin-imports.test.ts holds them to it).
// 'coordkit' re-exports all of it, with the calls that configure and start
// plugins.

// The plugin object and its roles
export type { CommandTools, ConformanceScenario, GlobalConfig, Plugin, PluginCommand, Role, RoleContext, RoleFactory } from '../core/plugin.ts';
export type { TypedContext } from '../core/typed-context.ts';
export { type RoleContextParts, roleContext } from '../core/role-context.ts';

// Errors: match on `err.code`; docs/errors.md lists every code
export {
  CoordError,
  type CoordErrorCode,
  type CoordErrorOptions,
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
export { channelBuilders, defineContract, escapeGlob, keyBuilders, patternGlob, patternRegex } from '../core/contract.ts';

// What a role talks to
export type { Arg, Backend, BlockingConnection, Command, PubSubMessage, Reply, Subscriber } from '../core/backend.ts';
export { ReplyError } from '../core/backend.ts';
export type { KeyInput, ScriptArg, ScriptCall, ScriptKey, ScriptRunner, ScriptShape, TypedCall, TypedScripts } from '../core/scripts.ts';
export { loadScriptDir } from '../core/scripts.ts';
export { withDeadline } from '../core/deadline.ts';
export type { Clock } from '../core/clock.ts';
export { systemClock } from '../core/clock.ts';
export type { Logger, LogLevel } from '../core/logger.ts';
export { memoryLogger, silentLogger } from '../core/logger.ts';

// API keys beside a deployment's token: kept in Redis as hashes, read by servers each heartbeat, managed by commands
export { type ApiKeyRecord, ApiKeys } from '../core/api-keys.ts';
export { type ApiKeyCommandsOptions, apiKeyCommands } from '../core/api-key-commands.ts';

// Helpers for roles and commands: files, processes, listeners, user modules
export { list as optionList, text as optionText } from '../core/option-values.ts';
export { findUp } from '../core/paths.ts';
export { findExecutable } from '../core/executable.ts';
export { lazyModule } from '../core/lazy-module.ts';
export { announceListener } from '../core/run-files.ts';
export { importModule } from '../core/typescript-modules.ts';
export { environment, type StopSignal, writeStderr } from '../core/platform.ts';
