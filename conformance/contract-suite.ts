// The contract conformance suite: runs each of a plugin's scenarios on a
// fresh backend under a unique hash-tag prefix, snapshots what it wrote and
// holds it to the plugin's contract. A plugin author runs it with one call:
//
//   contractSuite(t, { plugin, name: 'ioredis', make: () => createBackend({ url }) });
import type { SuiteTest } from './suite-test.ts';
import type { Backend, Command } from '../core/backend.ts';
import { checkSnapshot, matchEntry } from '../core/contract-check.ts';
import { type Plugin, pluginScenarios } from '../core/plugin.ts';
import { escapeGlob, snapshotKeyspace } from '../core/snapshot.ts';
import { scenarioContext } from './scenario-context.ts';

/**
 * What contractSuite runs: the plugin whose scenarios are checked, a name for
 * the backend, a factory of fresh backends, and optionally a key prefix and
 * config values.
 */
export interface ContractSuiteOptions {
  plugin: Plugin;
  /** Names the backend in test titles, e.g. 'ioredis' or 'embedded'. */
  name: string;
  /** A new backend for each scenario; the suite closes it. */
  make: () => Backend | Promise<Backend>;
  /**
   * Text put before the suite's own `{conf-<random>}:` prefix. Each scenario
   * writes and deletes only keys under the combined prefix, so the suite never
   * touches other data and, with its hash tag, all keys share one cluster slot.
   */
  keyPrefix?: string;
  /** Config values over the plugin's schema defaults. */
  config?: Record<string, unknown>;
}

/**
 * Runs each of the plugin's scenarios on a fresh backend and holds the
 * keyspace it leaves to the plugin's contract.
 *
 * @example
 * import t from 'tap';
 * t.test('contract on embedded', (t) => contractSuite(t, { plugin, name: 'embedded', make: () => createBackend({}) }));
 */
export async function contractSuite(t: SuiteTest, opts: ContractSuiteOptions): Promise<void> {
  const { plugin } = opts;
  const scenarios = await pluginScenarios(plugin);
  if (!scenarios.length) {
    t.fail(`plugin ${plugin.name} declares no scenarios: nothing shows that what it writes matches its contract`);
    return;
  }
  for (const scenario of scenarios) {
    await t.test(`${plugin.name} on ${opts.name}: ${scenario.name}`, async (t) => {
      const keyPrefix = `${opts.keyPrefix ?? ''}{conf-${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}}:`;
      const backend = await opts.make();
      const controller = new AbortController();
      try {
        await backend.ready();
        await deleteUnder(backend, keyPrefix);
        const ctx = scenarioContext({ plugin, backend, keyPrefix, signal: controller.signal, config: opts.config });
        await scenario.run(ctx);
        controller.abort(new Error(`scenario ${scenario.name} finished`));

        const snapshot = await snapshotKeyspace(backend, { keyPrefix });
        const deviations = checkSnapshot(plugin.contract, snapshot, { keyPrefix });
        // One failure per deviation, so every one is printed on its own line.
        if (deviations.length) for (const d of deviations) t.fail(`${d.kind}: ${d.message}`);
        else t.pass(`the keyspace (${snapshot.length} keys) conforms to contract ${plugin.contract.plugin}`);
        for (const entry of scenario.expects ?? []) {
          const spec = plugin.contract.keys[entry];
          if (!spec) {
            t.fail(`scenario ${scenario.name} expects "${entry}", which is not a key of contract ${plugin.contract.plugin}`);
            continue;
          }
          const count = snapshot.filter((s) => matchEntry(plugin.contract, s.key.slice(keyPrefix.length)) === entry).length;
          t.ok(count > 0, `leaves at least one ${entry} key (${spec.pattern}): found ${count}`);
        }
      } finally {
        if (!controller.signal.aborted) controller.abort(new Error(`scenario ${scenario.name} failed`));
        await deleteUnder(backend, keyPrefix).catch(() => {});
        await backend.close();
      }
    });
  }
}

/** Deletes every key under the prefix, and nothing else. */
async function deleteUnder(backend: Backend, keyPrefix: string): Promise<void> {
  const keys: string[] = [];
  for await (const key of backend.scan(`${escapeGlob(keyPrefix)}*`, 1000)) keys.push(key);
  for (let i = 0; i < keys.length; i += 500) {
    await backend.pipeline(keys.slice(i, i + 500).map((key): Command => ['DEL', key]));
  }
}
