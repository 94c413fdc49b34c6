// __NAME__'s own tests: the plugin passes coord's checks, its scenarios keep
// to its contract on every adapter (embedded always; ioredis and node-redis
// too when REDIS_URL names a Redis the tests may write to), and its role
// starts, heartbeats and cleans up after itself.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createBackend, loadConfig, registerPlugin, scriptTypesSource, startProcess } from 'coordkit';
import { contractSuite } from 'coordkit/conformance';
import plugin from '../index.ts';

const url = process.env.REDIS_URL || undefined;
const adapters = url ? ['embedded', 'ioredis', 'node-redis'] : ['embedded'];

t.test('coord accepts the plugin', async (t) => {
  t.doesNotThrow(() => registerPlugin(plugin));
});

t.test('scripts.gen.ts is current with the Lua headers (npm run script-types writes it)', async (t) => {
  const dir = fileURLToPath(new URL('..', import.meta.url));
  t.equal(readFileSync(`${dir}scripts.gen.ts`, 'utf8'), scriptTypesSource(dir));
});

for (const adapter of adapters) {
  t.test(`contract on ${adapter}`, (t) =>
    contractSuite(t, { plugin, name: adapter, make: () => createBackend({ adapter, url: adapter === 'embedded' ? undefined : url }) }),
  );
}

t.test('the member role registers, and removes itself when stopped', async (t) => {
  const keyPrefix = `{test-${process.pid}}:`;
  const config = loadConfig({
    plugins: [plugin],
    flags: [
      { path: 'redis.keyPrefix', value: keyPrefix },
      { path: '__NAME__.memberId', value: 'm1' },
      ...(url ? [{ path: 'redis.url', value: url }] : []),
    ],
  });
  const backend = await createBackend({ url });
  t.teardown(() => backend.close());
  const running = await startProcess({ plugins: [plugin], config, backend });
  t.same(running.roles, [{ plugin: '__NAME__', role: 'member' }]);
  t.same(await backend.send(['ZRANGE', `${keyPrefix}members`, 0, -1]), ['m1'], 'listed');
  t.ok(((await backend.send(['TTL', `${keyPrefix}member:m1`])) as number) > 0, 'its record expires unless refreshed');
  await running.stop('test');
  t.equal(await backend.send(['EXISTS', `${keyPrefix}member:m1`]), 0, 'record removed on stop');
  t.same(await backend.send(['ZRANGE', `${keyPrefix}members`, 0, -1]), [], 'index entry removed on stop');
});

t.test('a config that breaks a rule is one clear error', async (t) => {
  t.throws(() => loadConfig({ plugins: [plugin], flags: [{ path: '__NAME__.ttl', value: 1 }] }), {
    name: 'ConfigError',
    message: /ttl \(1s\) must be greater than interval \(5s\)/,
  });
});
