// startProcess as users call it: core's, with the built-in adapters wired in
// (core itself never imports an adapter). Exported from 'coordkit'.
import { connectBackend } from '../adapters/index.ts';
import { tokens } from '../core/di.ts';
import { startRoles as startWith, type ProcessHandle, type StartOptions } from '../core/runtime.ts';

/**
 * Starts one process: the plugins' roles (config.roles, or each plugin's
 * default roles) on a backend. Without a backend (in the options or registered
 * under tokens.Backend in the container) it opens the one config.redis names,
 * embedded when there is no URL, and closes it on stop.
 *
 * @example
 * import { loadConfig, startProcess } from 'coordkit';
 * import plugin from './index.ts';
 * const config = loadConfig({ plugins: [plugin], flags: [{ path: 'redis.url', value: 'redis://127.0.0.1:6379' }] });
 * const handle = await startProcess({ plugins: [plugin], config });
 * // …
 * await handle.stop('done');
 */
export function startProcess(options: StartOptions): Promise<ProcessHandle> {
  const registered = options.container?.isRegistered(tokens.Backend, true) ?? false;
  return startWith({ ...options, backend: options.backend ?? (registered ? undefined : connectBackend) });
}
