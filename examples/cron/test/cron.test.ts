// The cron plugin's own tests, as a plugin author writes them with tap:
// coord accepts the plugin, the shared contract suite holds its keyspace to
// its contract on every adapter, and two processes sharing one Redis run each
// tick of a job once.
//   npx tap test/cron.test.ts                                  embedded backend only
//   REDIS_URL=redis://127.0.0.1:6379 npx tap test/cron.test.ts also ioredis and node-redis
import t from 'tap';
import { createBackend, loadConfig, memoryLogger, registerPlugin, startProcess } from 'coordkit';
import { contractSuite } from 'coordkit/conformance';
import plugin from '../index.ts';

const url = process.env.REDIS_URL || undefined;
const adapters = url ? ['embedded', 'ioredis', 'node-redis'] : ['embedded'];

t.test('coord accepts the plugin', async (t) => {
  t.doesNotThrow(() => registerPlugin(plugin));
});

for (const adapter of adapters) {
  t.test(`contract on ${adapter}`, (t) =>
    contractSuite(t, { plugin, name: adapter, make: () => createBackend({ adapter, url: adapter === 'embedded' ? undefined : url }) }),
  );
}

t.test('two processes, one Redis: each tick runs once', async (t) => {
  const backend = await createBackend({ url });
  t.teardown(() => backend.close());
  const lines: NonNullable<Parameters<typeof memoryLogger>[0]> = []; // every log line of both processes
  const logs = memoryLogger(lines);
  const config = (runner: string) =>
    loadConfig({
      plugins: [plugin],
      flags: [
        { path: 'redis.keyPrefix', value: `{cron-test-${process.pid}}:` },
        { path: 'cron.runnerId', value: runner },
        { path: 'cron.jobs', value: [{ id: 'tick', every: 1, command: 'echo "$COORD_CRON_TICK"' }] },
      ],
    });
  const processes = await Promise.all(['a', 'b'].map((runner) => startProcess({ plugins: [plugin], config: config(runner), backend, logger: logs })));
  await new Promise((resolve) => setTimeout(resolve, 3500));
  for (const p of processes) await p.stop('test');

  const ran = lines.filter((l) => l.msg === 'job ran');
  const ticks = ran.map((l) => Number(l.fields.output));
  t.ok(ticks.length >= 3, `ran ${ticks.length} ticks in 3.5 s`);
  t.same(ticks, [...new Set(ticks)], 'no tick ran twice');
  t.same(ticks, ran.map((l) => l.fields.tick), 'the command saw its own tick');
});
