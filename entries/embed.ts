// coordkit's entry for applications that run coord inside their own process:
// `import { connectBackend, createLogger, processContainer, tokens } from 'coordkit/embed'`.
// What such an application needs beyond 'coordkit' (loadConfig, startProcess,
// createBackend and the plugin types come from there): the process handle's
// types, the config's JSON Schema, the backend the config names, a logger, and
// the container through which the clock, logger or backend are replaced.
export type { OpenBackend, ProcessHandle, RunningRole, StartOptions } from '../core/runtime.ts';
export type { ConfigFlag } from '../core/config.ts';
export { configSchema, parseSetFlag } from '../core/config.ts';
export type { AdapterName } from '../adapters/index.ts';
export { adapterNames, connectBackend } from '../adapters/index.ts';
export type { LogOptions } from '../core/pino-logger.ts';
export { createLogger } from '../core/pino-logger.ts';
export type { DependencyContainer } from '../core/di.ts';
export { processContainer, tokens } from '../core/di.ts';
export { coordVersion } from '../core/version.ts';
