// The embedded backend builds on ioredis-mock past its published API and on
// wasmoon's compiled Lua (glue.wasm), so coordkit pins both to one exact
// version: a user installs what the tests ran. This fails when the installed
// version is not the pinned one, when npm and Deno disagree, or when an
// ioredis-mock internal the adapter reaches for is gone — so an upgrade is a
// deliberate act: bump the pin, run this and the embedded tests, fix what fails.
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import RedisMock from 'ioredis-mock';
import t from 'tap';
import { dataset } from '../adapters/embedded/dataset.ts';
import { glueWasmPath, loadLuaModule } from '../adapters/embedded/lua-module.ts';
import { loadLua } from '../adapters/embedded/lua-wasm.ts';
import { mockCommands } from '../adapters/embedded/mock-commands.ts';
import { SortedSetMap } from '../adapters/embedded/sorted-set.ts';
import { ModuleLoadError } from '../core/errors.ts';
import { root } from './support/cli.ts';

const json = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'));
const pkg = json('package.json') as { dependencies: Record<string, string> };
const deno = json('deno.json') as { imports: Record<string, string> };
const lock = json('package-lock.json') as { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> };

for (const name of ['ioredis-mock', 'wasmoon']) {
  t.test(`${name} is pinned to one version, and that version is installed`, async (t) => {
    const pinned = pkg.dependencies[name]!;
    t.match(pinned, /^\d+\.\d+\.\d+$/, `package.json pins an exact version, not a range (${pinned})`);
    t.equal(deno.imports[name], `npm:${name}@${pinned}`, 'deno.json maps the same version');
    t.equal(lock.packages[`node_modules/${name}`]?.version, pinned, 'the lockfile holds it');
    t.equal(json(`node_modules/${name}/package.json`).version, pinned, 'node_modules holds it');
  });
}

t.test('fengari comes only with ioredis-mock: coordkit neither depends on it nor imports it', async (t) => {
  t.notOk(pkg.dependencies.fengari, 'not a dependency of coordkit');
  const dependents = Object.entries(lock.packages)
    .filter(([, entry]) => entry.dependencies?.fengari)
    .map(([path]) => path)
    .sort();
  t.same(dependents, ['node_modules/ioredis-mock'], 'only ioredis-mock pulls it in');
  const importers = ['adapters', 'core', 'entries', 'cli', 'plugins', 'conformance'].flatMap((dir) =>
    (readdirSync(join(root, dir), { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts') && /from ['"]fengari/.test(readFileSync(join(root, dir, file), 'utf8')))
      .map((file) => `${dir}/${file}`),
  );
  t.same(importers, [], 'no coord source imports it (scripts run on wasmoon, adapters/embedded/lua-vm.ts)');
});

t.test("the ioredis-mock internals the adapter builds on are there (see adapters/embedded/dataset.ts)", async (t) => {
  const Pipeline = (RedisMock as unknown as { Pipeline?: { prototype: Record<string, unknown> } }).Pipeline;
  t.type(Pipeline?.prototype._createCommand, 'function', 'RedisMock.Pipeline and its _createCommand');

  const ds = dataset(`dependencies-${process.pid}`);
  const { context } = ds.mock;
  for (const emitter of ['modifiedKeyEvents', 'channels', 'patternChannels'] as const) {
    t.ok(context[emitter] instanceof EventEmitter, `an instance's context.${emitter}`);
  }

  const commands = mockCommands(ds.mock);
  t.ok(commands.size >= 150, `the command table (${commands.size} emulators)`);
  const run = (...args: string[]) => commands.get(args[0]!)!.apply(ds.mock, args.slice(1));

  // Its commands write through the data and expires the adapter puts in place (store.ts), in these shapes.
  const written: string[] = [];
  const onWrite = (key: string) => written.push(key);
  ds.modified.on('modified', onWrite);
  t.teardown(() => void ds.modified.off('modified', onWrite));
  run('set', 'string', 'v', 'PX', '60000');
  run('hset', 'hash', 'f', 'v');
  run('sadd', 'set', 'm');
  run('rpush', 'list', 'a', 'b');
  run('zadd', 'zset', '1', 'm');
  t.equal(ds.mock.data.get('string'), 'v', 'a string as a string');
  t.ok(ds.mock.expires.has('string') && ds.mock.expires.get('string') > Date.now(), 'its expiry in the store');
  t.same(ds.mock.data.get('hash'), { f: 'v' }, 'a hash as a plain object');
  t.ok(ds.mock.data.get('set') instanceof Set, 'a set as a Set');
  t.same(ds.mock.data.get('list'), ['a', 'b'], 'a list as an array');
  const zset = ds.mock.data.get('zset');
  t.ok(zset instanceof SortedSetMap, 'a sorted set as a Map (kept as SortedSetMap)');
  t.same((zset as Map<string, unknown>).get('m'), { score: 1, value: 'm' }, 'of member → {score, value}');
  t.same([...new Set(written)], ['string', 'hash', 'set', 'list', 'zset'], 'each write is signalled on modifiedKeyEvents');

  // Pub/sub: an instance made by connect() hears what the dataset's publish sends.
  const subscriber = ds.connect();
  const heard = new Promise<unknown[]>((resolve) => subscriber.once('message', (...message: unknown[]) => resolve(message)));
  await subscriber.subscribe('news');
  run('publish', 'news', 'hello');
  t.same(await heard, ['news', 'hello'], 'a connected instance receives the message');
  subscriber.disconnect();
});

t.test('the Lua engine loads without touching any global', async (t) => {
  const wasm = (globalThis as unknown as { WebAssembly: Record<string, unknown> }).WebAssembly;
  const before = { ...wasm };
  const names = Object.getOwnPropertyNames(globalThis).sort();
  await loadLua();
  t.same({ ...wasm }, before, 'WebAssembly is as it was');
  t.same(Object.getOwnPropertyNames(globalThis).sort(), names, 'no global added');
  t.match(glueWasmPath(), /node_modules[/\\]wasmoon[/\\]dist[/\\]glue\.wasm$/, "glue.wasm comes from the pinned wasmoon");
});

t.test('a Lua engine that does not load is one coded error', async (t) => {
  const error = await loadLuaModule(join(root, 'package.json')).catch((e: unknown) => e);
  t.ok(error instanceof ModuleLoadError, 'a ModuleLoadError');
  t.equal((error as ModuleLoadError).code, 'COORD_ERR_EMBEDDED_LUA_LOAD');
  t.match((error as Error).message, /Lua engine .* does not load/);
});
