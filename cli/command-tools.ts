// What a plugin's own CLI command gets (CommandTools): a role context on the
// deployment the usual flags name, and a way to print.
import { systemClock } from '../core/clock.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { environment } from '../core/platform.ts';
import type { CommandTools, Plugin, RoleContext } from '../core/plugin.ts';
import { roleContext } from '../core/role-context.ts';
import { connectBackend, registerPlugin } from '../core/runtime.ts';
import { builtinPlugins } from '../plugins/index.ts';
import type { Io } from './io.ts';
import { configFlags, text } from './options.ts';

export function commandTools(plugin: Plugin, options: Readonly<Record<string, unknown>>, io: Io): CommandTools {
  return {
    print: (line) => io.out(line),
    async connect(): Promise<RoleContext & { close(): Promise<void> }> {
      const config = loadConfig({
        plugins: [plugin],
        knownPlugins: Object.keys(builtinPlugins),
        file: text(options.config),
        env: environment(),
        flags: configFlags(options),
      });
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
