// Every script call of every built-in plugin, under a hash-tag key prefix,
// touches keys of one Redis Cluster slot: the KEYS it passes and the key heads
// it passes for derivation. Recorded while the plugin's conformance scenarios run.
import t from 'tap';
import calculateSlot from 'cluster-key-slot';
import { createBackend } from '../adapters/index.ts';
import type { Backend } from '../core/backend.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import { pluginScenarios } from '../core/plugin.ts';
import { builtinPlugins } from '../plugins/index.ts';

for (const [name, load] of Object.entries(builtinPlugins)) {
  t.test(name, async (t) => {
    const plugin = await load();
    const real = await createBackend({ url: 'embedded://slots' });
    const calls: { script: string; keys: string[]; heads: string[] }[] = [];
    const recording: Backend = Object.create(real, {
      evalScript: {
        value: (script: Parameters<Backend['evalScript']>[0], keys: string[], args: (string | number)[]) => {
          const heads = args.filter((a): a is string => typeof a === 'string' && a.startsWith('{slots}:'));
          calls.push({ script: script.name, keys: [...keys], heads });
          return real.evalScript(script, keys, args);
        },
      },
    });
    for (const scenario of await pluginScenarios(plugin)) {
      await scenario.run(scenarioContext({ plugin, backend: recording, keyPrefix: '{slots}:', signal: new AbortController().signal }));
    }
    await real.close();
    t.ok(calls.length > 0, 'scenarios called scripts');
    const slot = calculateSlot('{slots}:');
    for (const call of calls) {
      const slots = new Set([...call.keys, ...call.heads].map((k) => calculateSlot(k)));
      t.same([...slots], [slot], `${call.script}: ${call.keys.length} keys and ${call.heads.length} derived heads in slot ${slot}`);
    }
  });
}
