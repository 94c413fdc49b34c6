// `coord run --plugin P [--role R]…` or `coord run --config deploy.yaml`
// (the plugins, roles and options the file names): starts roles in this process and runs
// until SIGINT or SIGTERM, which stop them in reverse order and exit 0. A
// second signal while stopping exits 1 at once.
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { environment, exit, onStopSignals, stdoutIsTTY } from '../../core/platform.ts';
import { startProcess } from '../../core/runtime.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { deploymentPlugins, moduleNames } from '../deployment.ts';
import { loadPlugins } from '../load-plugin.ts';
import { configFlags, list, pluginFlags, text } from '../options.ts';

export async function runCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const specs = list(options.plugin);
  const file = text(options.config);
  // No --plugin: the plugins the config file names (a deployment file).
  const plugins = specs.length ? await loadPlugins(specs) : file ? await deploymentPlugins(file) : [];
  if (!plugins.length) throw new UsageError(file ? `run needs --plugin NAME, or a plugins: section in ${file}` : 'run needs --plugin NAME (see coord plugins)');
  const config = loadConfig({
    plugins,
    knownPlugins: [...Object.keys(builtinPlugins), ...moduleNames(file)],
    file,
    env: environment(),
    flags: [...pluginFlags(options, plugins), ...configFlags(options)],
  });
  const logger = createLogger(config.log);
  const handle = await startProcess({ plugins, config, logger });

  // Signals are handled before `ready` is said: whoever stops the process on seeing it must not kill it.
  const stopped = new Promise<number>((resolve) => {
    let received = 0;
    onStopSignals((signal) => {
      received += 1;
      if (received > 1) {
        io.err(`coord: ${signal} again while stopping: exiting now`);
        exit(1);
      }
      logger.info('stopping', { signal });
      void handle.stop(signal).then(() => resolve(0));
    });
  });

  const roles = handle.roles.map((r) => `${r.plugin}/${r.role}`);
  logger.info('ready', { roles, redis: handle.backend.displayUrl, keyPrefix: config.redis.keyPrefix });
  if (stdoutIsTTY()) {
    const prefix = config.redis.keyPrefix ? `, key prefix ${config.redis.keyPrefix}` : '';
    io.out(`ready: ${roles.join(', ')} on ${handle.backend.displayUrl}${prefix}. Ctrl-C stops.`);
  }
  return stopped;
}
