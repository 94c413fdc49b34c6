// Starts a plugin's roles in this process, as one `coord run --plugin NAME
// [--role …]` process would: the in-process counterpart of support/cli.ts,
// shared by the browser-grid, webdriver and load-test helpers.
import { connectBackend } from '../../adapters/index.ts';
import type { Backend } from '../../core/backend.ts';
import { loadConfig, type ConfigFlag } from '../../core/config.ts';
import { memoryLogger } from '../../core/logger.ts';
import type { Plugin } from '../../core/plugin.ts';
import { startRoles as startCore, type ProcessHandle } from '../../core/runtime.ts';

export interface RolesProcess {
  handle: ProcessHandle;
  logs: ReturnType<typeof memoryLogger>['lines'];
}

export interface RolesOptions {
  redis?: string;
  prefix?: string;
  roles?: string[];
  /** The plugin's options, as `--set NAME.<path>` flags; nested objects name deeper paths ({ proxy: { port: 1 } } → NAME.proxy.port). */
  options?: Record<string, unknown>;
  /** Default: the Redis adapter the CLI would pick for the URL. */
  backend?: Backend;
}

/** Flattens nested options into --set paths. */
function optionFlags(options: Record<string, unknown>, at: string): ConfigFlag[] {
  return Object.entries(options).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? optionFlags(v as Record<string, unknown>, `${at}.${k}`) : [{ path: `${at}.${k}`, value: v }],
  );
}

export async function startRoles(plugin: Plugin, opts: RolesOptions): Promise<RolesProcess> {
  const config = loadConfig({
    plugins: [plugin],
    env: {},
    flags: [
      ...(opts.redis ? [{ path: 'redis.url', value: opts.redis }] : []),
      ...(opts.prefix ? [{ path: 'redis.keyPrefix', value: opts.prefix }] : []),
      { path: 'roles', value: opts.roles ?? [] },
      ...optionFlags(opts.options ?? {}, plugin.name),
    ],
  });
  const logger = memoryLogger();
  const handle = await startCore({ plugins: [plugin], config, logger, backend: opts.backend ?? connectBackend });
  return { handle, logs: logger.lines };
}
