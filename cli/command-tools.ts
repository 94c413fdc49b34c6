// What a plugin's own CLI command gets (CommandTools): a role context on the
// deployment the usual flags name, the config input they make, a process of
// its roles (as coord run starts one), signals, and ways to print.
import { adapterNames, connectBackend } from '../adapters/index.ts';
import { systemClock } from '../core/clock.ts';
import { loadConfig, type ConfigInput } from '../core/config.ts';
import { createLogger } from '../core/pino-logger.ts';
import { environment, exit, onStopSignals, stderrIsTTY, writeStderr, type StopSignal } from '../core/platform.ts';
import type { CommandTools, Plugin, RoleContext } from '../core/plugin.ts';
import { roleContext } from '../core/role-context.ts';
import { liveListeners } from '../core/run-files.ts';
import { loadScriptDir } from '../core/scripts.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { moduleNames } from './deployment.ts';
import { UsageError } from './errors.ts';
import type { Io } from './io.ts';
import { configFlags, text } from './options.ts';
import { table } from './table.ts';

/** The exit code of a process a second signal ends (128 + the signal's number, as shells report it). */
const SIGNAL_EXIT: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * What loadConfig takes from a command line, but the plugins: the --config
 * file (plugins it names under modules: are known, not unknown sections), the
 * environment and the config flags.
 */
export function commandConfigInput(options: Readonly<Record<string, unknown>>): Omit<ConfigInput, 'plugins'> {
  const file = text(options.config);
  return { knownPlugins: [...Object.keys(builtinPlugins), ...moduleNames(file)], file, env: environment(), flags: configFlags(options), adapters: adapterNames };
}

/**
 * `name` is the command as typed ('grid status'). connect() reads a running
 * deployment, so it needs the deployment's Redis: without one it would read an
 * empty embedded backend of its own and report nothing, so it says where the
 * state of a process started without --redis is instead.
 */
export function commandTools(plugin: Plugin, options: Readonly<Record<string, unknown>>, io: Io, name = plugin.name): CommandTools {
  const tty = stderrIsTTY();
  return {
    print: (line) => io.out(line),
    printErr: (line) => io.err(line),
    table,
    progress(line) {
      if (line === undefined) {
        if (tty) writeStderr('\n');
      } else writeStderr(tty ? `\r${line}\u001b[K` : `${line}\n`);
    },
    async start(config, { backend, plugins = [plugin] } = {}) {
      const logger = createLogger({ ...config.log, stderr: true });
      const { startRoles } = await import('../core/runtime.ts'); // the DI container and role runtime: only for a command that starts roles
      return startRoles({ plugins, config, logger, backend: backend ?? connectBackend });
    },
    onStop(handler) {
      let first: StopSignal | undefined;
      return onStopSignals((signal) => {
        if (first) {
          writeStderr(`\n${signal} again: exiting now\n`);
          exit(SIGNAL_EXIT[signal]);
        }
        first = signal;
        handler(signal);
      });
    },
    // Read when asked: a command that does not use it does not fail on a bad --set.
    get configInput() {
      return commandConfigInput(options);
    },
    loadConfig({ plugins = [plugin], before = [], after = [] } = {}) {
      const input = commandConfigInput(options);
      return loadConfig({ ...input, plugins, flags: [...before, ...(input.flags ?? []), ...after] });
    },
    async connect(): Promise<RoleContext & { close(): Promise<void> }> {
      const config = loadConfig({ ...commandConfigInput(options), plugins: [plugin] });
      if (!config.redis.url) throw new UsageError(noDeployment(name, plugin.name, config.plugins[plugin.name]), { code: 'COORD_ERR_CLI_NO_DEPLOYMENT' });
      // Standard output is the command's result: its log lines go to standard error.
      const logger = createLogger({ ...config.log, stderr: true, lazy: true }).child({ plugin: plugin.name });
      const backend = await connectBackend(config.redis, logger);
      const controller = new AbortController();
      const ctx = roleContext({
        plugin,
        // The plugin was checked when it was loaded (built-in ones by their own tests): only its scripts are needed
        // here, parsed when the command first runs one (a status command reads keys and runs none).
        scripts: () => (plugin.scripts === undefined ? [] : loadScriptDir(plugin.scripts, plugin.contract)),
        config: config.plugins[plugin.name] ?? {},
        global: { redis: config.redis, log: config.log },
        backend,
        logger,
        clock: systemClock,
        signal: controller.signal,
        roles: [],
      });
      return {
        ...ctx,
        async close() {
          controller.abort(new Error('command finished'));
          await backend.close();
        },
      };
    },
  };
}

function noDeployment(name: string, plugin: string, section: Readonly<Record<string, unknown>> | undefined): string {
  // The addresses running processes announced (core/run-files.ts) are what they really listen on; the config's port is a guess.
  const running = liveListeners(plugin).map((l) => `curl ${l.url}/status (${l.what}, pid ${l.pid})`);
  const port = typeof section?.port === 'number' ? section.port : undefined;
  const ask = running.length
    ? `ask the running process instead: ${running.join('; ')}`
    : port
      ? `ask the running process instead (curl http://127.0.0.1:${port}/status, if it runs with this config)`
      : "ask the running process instead (its HTTP port's /status, where it has one)";
  return `${name} reads a deployment's Redis, and none is named (--redis URL, REDIS_URL, or redis.url in --config): a process started without one keeps its state in an embedded backend inside that process; ${ask}`;
}
