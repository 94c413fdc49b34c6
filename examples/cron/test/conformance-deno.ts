// The contract check without tap, for Deno (tap's runner does not work
// there): each scenario on each adapter, under a fresh hash-tag prefix; the
// keyspace it leaves is snapshotted and held to the contract, and every key
// the scenario expects must be there. One JSON line per scenario; exit 1 on
// any deviation.
//   deno run -A examples/cron/test/conformance-deno.ts [redis://host:port]
import { createBackend, registerPlugin, type Backend } from 'coordkit';
import { checkSnapshot, matchEntry, pluginScenarios, scenarioContext, snapshotKeyspace } from 'coordkit/conformance';
import plugin from '../index.ts';

const deno = (globalThis as { Deno?: { args: string[]; version: { deno: string } } }).Deno;
const runtime = deno ? `deno ${deno.version.deno}` : `node ${process.version}`;
const url = [...(deno?.args ?? []), ...process.argv].find((a) => /^rediss?:\/\//.test(a));
const adapters = url ? ['embedded', 'ioredis', 'node-redis'] : ['embedded'];
registerPlugin(plugin);

let failed = 0;
for (const adapter of adapters) {
  for (const scenario of await pluginScenarios(plugin)) {
    const backend: Backend = await createBackend({ adapter, url: adapter === 'embedded' ? undefined : url });
    const keyPrefix = `{deno-${crypto.randomUUID().slice(0, 8)}}:`;
    const controller = new AbortController();
    const result = { runtime, adapter, scenario: scenario.name, keys: 0, deviations: [] as string[], missing: [] as string[], error: undefined as string | undefined };
    try {
      await backend.ready();
      await scenario.run(scenarioContext({ plugin, backend, keyPrefix, signal: controller.signal }) as Parameters<typeof scenario.run>[0]);
      const snapshot = await snapshotKeyspace(backend, { keyPrefix });
      result.keys = snapshot.length;
      result.deviations = checkSnapshot(plugin.contract, snapshot, { keyPrefix }).map((d) => `${d.kind}: ${d.message}`);
      result.missing = (scenario.expects ?? []).filter((entry) => !snapshot.some((s) => matchEntry(plugin.contract, s.key.slice(keyPrefix.length)) === entry));
      for (const s of snapshot) await backend.send(['DEL', s.key]);
    } catch (error) {
      result.error = (error as Error).message;
    } finally {
      controller.abort();
      await backend.close();
    }
    if (result.deviations.length || result.missing.length || result.error) failed += 1;
    console.log(JSON.stringify(result));
  }
}
process.exit(failed ? 1 : 0);
