// coordkit's entry for applications that run coord inside their own process:
// `import { startProcess, loadConfig, processContainer, tokens } from 'coordkit/embed'`.
// Load the config, start the plugins' roles on a backend (the one the config
// names, or the application's own), stop them. The clock, logger or backend
// can be replaced through a container (processContainer, tokens). The
// plugin types come from 'coordkit'. This entry wires core to the built-in
// adapters, which core itself never imports.
import { connectBackend } from '../adapters/index.ts';
import { tokens } from '../core/di.ts';
import { startProcess as startWith, type ProcessHandle, type StartOptions } from '../core/runtime.ts';

/**
 * Starts one process (see StartOptions). Without a backend (in the options or
 * registered under tokens.Backend in the container) it opens the one
 * config.redis names, embedded when there is no URL, and closes it on stop.
 */
export function startProcess(options: StartOptions): Promise<ProcessHandle> {
  const registered = options.container?.isRegistered(tokens.Backend, true) ?? false;
  return startWith({ ...options, backend: options.backend ?? (registered ? undefined : connectBackend) });
}

export type { OpenBackend, ProcessHandle, RegisteredPlugin, RunningRole, StartOptions } from '../core/runtime.ts';
export { registerPlugin, StartError } from '../core/runtime.ts';
export type { ConfigFlag, ConfigInput, CoordConfig } from '../core/config.ts';
export { ConfigError, configSchema, loadConfig, parseSetFlag } from '../core/config.ts';
export type { AdapterName } from '../adapters/index.ts';
export { adapterNames, connectBackend, createBackend } from '../adapters/index.ts';
export type { LogOptions } from '../core/pino-logger.ts';
export { createLogger } from '../core/pino-logger.ts';
export type { Clock } from '../core/clock.ts';
export type { Logger } from '../core/logger.ts';
export type { Backend } from '../core/backend.ts';
export type { DependencyContainer } from '../core/di.ts';
export { processContainer, tokens } from '../core/di.ts';
export { coordVersion } from '../core/version.ts';
