// `coord inspect --plugin P --redis URL [--prefix P]`, or `coord inspect
// --config deploy.yaml` (the plugins the file names, as `coord run --config`):
// holds a running deployment's keyspace to the plugins' contracts, each key
// to the contract it belongs to. Exit 1 when it deviates.
import { connectBackend } from '../../adapters/index.ts';
import { checkSnapshot, formatDeviations, matchEntry } from '../../core/contract-check.ts';
import type { ContractSpec } from '../../core/contract.ts';
import { loadConfig } from '../../core/config.ts';
import { pluginKeyPrefix } from '../../core/key-prefix.ts';
import { snapshotKeyspace } from '../../core/snapshot.ts';
import { commandConfigInput } from '../command-tools.ts';
import { deploymentPlugins } from '../deployment.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { loadPlugins } from '../load-plugin.ts';
import { list, text } from '../options.ts';

export async function inspectCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const specs = list(options.plugin);
  const file = text(options.config);
  // No --plugin: the plugins the config file names (a deployment file).
  const plugins = specs.length ? await loadPlugins(specs) : file ? await deploymentPlugins(file) : [];
  if (!plugins.length) throw new UsageError(file ? `inspect needs --plugin NAME, or a plugins: section in ${file}` : 'inspect needs --plugin NAME (see coord plugins)', { code: 'COORD_ERR_CLI_NO_PLUGIN' });
  const config = loadConfig({ ...commandConfigInput(options), plugins });
  if (!config.redis.url) throw new UsageError('inspect needs --redis URL: the deployment to check', { code: 'COORD_ERR_CLI_NO_REDIS' });
  const backend = await connectBackend(config.redis);
  try {
    // Each plugin's keys under its own prefix (<plugin>.keyPrefix, default redis.keyPrefix).
    const prefixes = plugins.map((p) => ({ plugin: p, keyPrefix: pluginKeyPrefix(config, p.name).prefix }));
    const distinct = [...new Set(prefixes.map((p) => p.keyPrefix))];
    const snapshots = await Promise.all(distinct.map(async (keyPrefix) => ({ keyPrefix, snapshot: await snapshotKeyspace(backend, { keyPrefix }) })));
    const names = plugins.map((p) => p.contract.plugin).join(', ');
    // A key no contract declares is checked against none of them: it is reported as unknown to all.
    const none: ContractSpec = { plugin: names, keys: {} };
    const contractOf = (key: string, keyPrefix: string) =>
      prefixes.find((p) => p.keyPrefix === keyPrefix && matchEntry(p.plugin.contract, key.slice(keyPrefix.length)) !== undefined)?.plugin.contract ?? none;
    // A key under a longer prefix belongs there, not to a plugin whose prefix only begins it.
    const owner = (key: string) => distinct.filter((keyPrefix) => key.startsWith(keyPrefix)).sort((a, b) => b.length - a.length)[0]!;
    const deviations = snapshots.flatMap(({ keyPrefix, snapshot }) =>
      snapshot.filter((snap) => owner(snap.key) === keyPrefix).flatMap((snap) => checkSnapshot(contractOf(snap.key, keyPrefix), [snap], { keyPrefix })),
    );
    const count = new Set(snapshots.flatMap(({ snapshot }) => snapshot.map((snap) => snap.key))).size;
    const under = distinct.filter(Boolean).join(', ');
    const where = `${count} keys${under ? ` under ${under}` : ''} on ${backend.displayUrl}`;
    if (deviations.length === 0) {
      io.out(`no deviations in ${where}`);
      return 0;
    }
    io.out(formatDeviations(deviations));
    io.out(`${deviations.length} deviation(s) from contract${plugins.length > 1 ? 's' : ''} ${names} in ${where}`);
    return 1;
  } finally {
    await backend.close();
  }
}
