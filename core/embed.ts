// coordkit's entry for applications that run coord inside their own process:
// `import { startProcess, loadConfig, createBackend } from 'coordkit/embed'`.
// Load the config, start the plugins' roles on a backend (made from the
// config, or the application's own), stop them. The plugin types come from
// 'coordkit'.
export type { ProcessHandle, RegisteredPlugin, RunningRole, StartOptions } from './runtime.ts';
export { registerPlugin, StartError, startProcess } from './runtime.ts';
export type { ConfigFlag, ConfigInput, CoordConfig } from './config.ts';
export { ConfigError, configSchema, loadConfig, parseSetFlag } from './config.ts';
export type { AdapterName } from '../adapters/index.ts';
export { adapterNames, createBackend } from '../adapters/index.ts';
export type { LogOptions } from './log.ts';
export { createLogger } from './log.ts';
export type { Clock } from './clock.ts';
export type { Logger } from './logger.ts';
export type { Backend } from './backend.ts';
export { tokens } from './di.ts';
export { coordVersion } from './version.ts';
