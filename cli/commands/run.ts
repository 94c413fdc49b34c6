// `coord run --plugin P [--role R]…` or `coord run --config deploy.yaml`
// (the plugins, roles and options the file names): starts roles in this process and runs
// until SIGINT or SIGTERM, which stop them in reverse order and exit 0. A
// second signal while stopping exits at once, 130 (SIGINT) or 143 (SIGTERM)
// as a shell reports a process a signal ended — but not the same signal
// within a second: one Ctrl-C reaches coord twice when a wrapper (deno task,
// a shell script, a container runtime) forwards what the terminal already
// sent the whole process group, and it must still drain.
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/pino-logger.ts';
import { environment, exit, onStopSignals, stdoutIsTTY } from '../../core/platform.ts';
import type { Logger } from '../../core/logger.ts';
import type { Plugin } from '../../core/plugin.ts';
import { startRoles, type RunningRole } from '../../core/runtime.ts';
import { adapterNames, connectBackend } from '../../adapters/index.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { deploymentPlugins, moduleNames } from '../deployment.ts';
import { loadPlugins } from '../load-plugin.ts';
import { configFlags, list, pluginFlags, text } from '../options.ts';
import { explainStartError } from '../start-errors.ts';

/** A second signal of the same kind within this long is the first one delivered again. */
const REPEAT_MS = 1000;

/** The exit code of a process a second signal ends (128 + the signal's number). */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

export async function runCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const specs = list(options.plugin);
  const file = text(options.config);
  // No --plugin: the plugins the config file names (a deployment file).
  const plugins = specs.length ? await loadPlugins(specs) : file ? await deploymentPlugins(file) : [];
  if (!plugins.length) throw new UsageError(file ? `run needs --plugin NAME, or a plugins: section in ${file}` : 'run needs --plugin NAME (see coord plugins)', { code: 'COORD_ERR_CLI_NO_PLUGIN' });
  const config = loadConfig({
    plugins,
    knownPlugins: [...Object.keys(builtinPlugins), ...moduleNames(file)],
    file,
    env: environment(),
    flags: [...pluginFlags(options, plugins), ...configFlags(options)],
    adapters: adapterNames,
  });
  const logger = createLogger(config.log);
  // A port in use names its config key (one line, exit 2).
  const handle = await startRoles({ plugins, config, logger, backend: connectBackend }).catch((err: unknown) => {
    throw explainStartError(err, config.plugins);
  });

  // Signals are handled before `ready` is said: whoever stops the process on seeing it must not kill it.
  const stopped = new Promise<number>((resolve) => {
    let first: { signal: string; at: number } | undefined;
    onStopSignals((signal) => {
      if (first) {
        if (signal === first.signal && Date.now() - first.at < REPEAT_MS) return; // the same Ctrl-C, delivered twice
        io.err(`coord: ${signal} again while stopping: exiting now`);
        exit(SIGNAL_EXIT[signal]);
      }
      first = { signal, at: Date.now() };
      logger.info('stopping', { signal });
      void handle.stop(signal).then(() => resolve(0));
    });
  });

  if (!config.redis.url && config.roles.length) warnSplit(plugins, handle.roles, logger);
  const roles = handle.roles.map((r) => `${r.plugin}/${r.role}`);
  logger.info('ready', { roles, redis: handle.backend.displayUrl, keyPrefix: config.redis.keyPrefix });
  if (stdoutIsTTY()) {
    const prefix = config.redis.keyPrefix ? `, key prefix ${config.redis.keyPrefix}` : '';
    io.out(`ready: ${roles.join(', ')} on ${handle.backend.displayUrl}${prefix}. Ctrl-C stops.`);
  }
  return stopped;
}

/**
 * Some of a plugin's roles named with --role on the embedded backend: it lives
 * in this process, so the roles in other processes can never meet these.
 */
function warnSplit(plugins: readonly Plugin[], started: readonly RunningRole[], logger: Logger): void {
  for (const plugin of plugins) {
    const here = started.filter((r) => r.plugin === plugin.name).map((r) => r.role);
    const elsewhere = Object.keys(plugin.roles).filter((role) => !here.includes(role));
    if (!here.length || !elsewhere.length) continue;
    logger.warn(
      `${plugin.name}: roles ${here.join(', ')} run on the embedded backend, which lives inside this process: they cannot meet roles (${elsewhere.join(', ')}) in other processes; give every process of the deployment the same --redis URL (or REDIS_URL)`,
      { plugin: plugin.name, roles: here },
    );
  }
}
