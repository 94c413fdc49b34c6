// `coord inspect --plugin P --redis URL [--prefix P]`: holds a running
// deployment's keyspace to the plugin's contract. Exit 1 when it deviates.
import { checkSnapshot, formatDeviations } from '../../core/contract-check.ts';
import { loadConfig } from '../../core/config.ts';
import { environment } from '../../core/platform.ts';
import { connectBackend } from '../../core/runtime.ts';
import { snapshotKeyspace } from '../../core/snapshot.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { loadPlugin } from '../load-plugin.ts';
import { configFlags, text } from '../options.ts';

export async function inspectCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const spec = text(options.plugin);
  if (!spec) throw new UsageError('inspect needs --plugin NAME (see coord plugins)');
  const plugin = await loadPlugin(spec);
  const config = loadConfig({
    plugins: [plugin],
    knownPlugins: Object.keys(builtinPlugins),
    file: text(options.config),
    env: environment(),
    flags: configFlags(options),
  });
  if (!config.redis.url) throw new UsageError('inspect needs --redis URL: the deployment to check');
  const backend = await connectBackend(config);
  try {
    const keyPrefix = config.redis.keyPrefix;
    const snapshot = await snapshotKeyspace(backend, { keyPrefix });
    const deviations = checkSnapshot(plugin.contract, snapshot, { keyPrefix });
    const where = `${snapshot.length} keys${keyPrefix ? ` under ${keyPrefix}` : ''} on ${backend.displayUrl}`;
    if (deviations.length === 0) {
      io.out(`no deviations in ${where}`);
      return 0;
    }
    io.out(formatDeviations(deviations));
    io.out(`${deviations.length} deviation(s) from contract ${plugin.contract.plugin} in ${where}`);
    return 1;
  } finally {
    await backend.close();
  }
}
