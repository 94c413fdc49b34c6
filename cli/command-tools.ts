// What a plugin's own CLI command gets (CommandTools): a role context on the
// deployment the usual flags name, the config input they make, and a way to print.
import { systemClock } from '../core/clock.ts';
import { loadConfig, type ConfigInput } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { environment } from '../core/platform.ts';
import type { CommandTools, Plugin, RoleContext } from '../core/plugin.ts';
import { roleContext } from '../core/role-context.ts';
import { connectBackend, registerPlugin } from '../core/runtime.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { moduleNames } from './deployment.ts';
import type { Io } from './io.ts';
import { configFlags, text } from './options.ts';

/**
 * What loadConfig takes from a command line, but the plugins: the --config
 * file (plugins it names under modules: are known, not unknown sections), the
 * environment and the config flags.
 */
export function commandConfigInput(options: Readonly<Record<string, unknown>>): Omit<ConfigInput, 'plugins'> {
  const file = text(options.config);
  return { knownPlugins: [...Object.keys(builtinPlugins), ...moduleNames(file)], file, env: environment(), flags: configFlags(options) };
}

export function commandTools(plugin: Plugin, options: Readonly<Record<string, unknown>>, io: Io): CommandTools {
  return {
    print: (line) => io.out(line),
    // Read when asked: a command that does not use it does not fail on a bad --set.
    get configInput() {
      return commandConfigInput(options);
    },
    async connect(): Promise<RoleContext & { close(): Promise<void> }> {
      const config = loadConfig({ ...commandConfigInput(options), plugins: [plugin] });
      // Standard output is the command's result: its log lines go to standard error.
      const logger = createLogger({ ...config.log, stderr: true }).child({ plugin: plugin.name });
      const backend = await connectBackend(config, logger);
      const controller = new AbortController();
      const ctx = roleContext({
        plugin,
        scripts: registerPlugin(plugin).scripts,
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
