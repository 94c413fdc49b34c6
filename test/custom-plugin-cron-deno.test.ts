// The Deno half of the example plugin's conformance: tap's runner does not
// work under Deno (so neither does `coord conformance`), so the same check —
// each scenario on each adapter, the keyspace snapshotted and held to the
// contract, every expected key present — runs as a plain Deno program
// (examples/cron/test/conformance-deno.ts) on embedded, ioredis and node-redis.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';
import plugin from '../examples/cron/index.ts';
import { pluginScenarios } from '../core/plugin.ts';

t.before(() => buildIfStale()); // the example imports 'coord', which is the built package
const redis = await startRedis();
t.teardown(() => redis.stop());

t.test('every scenario keeps to the contract on all three adapters, under Deno', async (t) => {
  const r = spawnSync(join(root, 'node_modules/deno/deno'), ['run', '-A', 'examples/cron/test/conformance-deno.ts', redis.url], {
    cwd: root,
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  t.equal(r.status, 0, `exit 0: ${r.stderr}`);
  const results = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as { runtime: string; adapter: string; scenario: string; keys: number; deviations: string[]; missing: string[]; error?: string });
  const scenarios = (await pluginScenarios(plugin)).map((s) => s.name);
  t.same(results.map((x) => `${x.adapter}: ${x.scenario}`), ['embedded', 'ioredis', 'node-redis'].flatMap((a) => scenarios.map((s) => `${a}: ${s}`)), 'each scenario on each adapter');
  for (const x of results) {
    t.match(x.runtime, /^deno 2\./, 'ran under Deno');
    t.ok(x.keys > 0, `${x.adapter}: ${x.scenario}: wrote ${x.keys} keys`);
    t.same([x.error, x.deviations, x.missing], [undefined, [], []], `${x.adapter}: ${x.scenario}: no deviation, every expected key present`);
  }
});
