// The plugin and role runtime: every plugin check has its own named error;
// roles start in order and stop in reverse; a failed start stops the others;
// the clock, logger and backend given are the ones roles get.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectBackend, createBackend } from '../adapters/index.ts';
import { ConnectionError } from '../core/backend.ts';
import type { Clock } from '../core/clock.ts';
import { loadConfig, type CoordConfig } from '../core/config.ts';
import { memoryLogger } from '../core/logger.ts';
import { PluginError, type Plugin, type Role, type RoleContext } from '../core/plugin.ts';
import { registerPlugin, rolesToStart, startRoles, StartError } from '../core/runtime.ts';
import { freePort, startRedis } from './support/redis.ts';

const dir = mkdtempSync(join(tmpdir(), 'coord-runtime-'));

/** A plugin with roles a, b, c that record what happens to them in `events`. */
function recorder(events: string[], extra: Partial<Plugin> = {}): Plugin {
  const role = (name: string) => (ctx: RoleContext) => ({
    async start() {
      events.push(`start ${name}`);
      await ctx.backend.send(['SET', ctx.keys.mark({ role: name }), String(ctx.clock.now())]);
      ctx.logger.info(`${name} is up`);
    },
    async stop(reason: string) {
      events.push(`stop ${name} (${reason}, signal aborted: ${ctx.signal.aborted})`);
    },
  });
  return {
    name: 'recorder',
    version: '1.2.3',
    coord: '^0.1.0',
    description: 'records starts and stops',
    contract: {
      plugin: 'recorder',
      keys: { mark: { pattern: 'mark:{role}', type: 'string', description: 'when a role started', ttl: 'none', writers: ['a', 'b', 'c'], value: { type: 'integer' } } },
    },
    config: { schema: { type: 'object', properties: { label: { type: 'string', default: 'rec' } } } },
    roles: { a: role('a'), b: role('b'), c: role('c') },
    ...extra,
  } as Plugin;
}

function pluginError(candidate: unknown): string {
  try {
    registerPlugin(candidate);
  } catch (err) {
    if (err instanceof PluginError) return err.message;
    throw err;
  }
  throw new Error('expected a PluginError, got none');
}

function configFor(plugins: Plugin[], extra: { roles?: string[]; url?: string; keyPrefix?: string } = {}): Readonly<CoordConfig> {
  const flags = [
    ...(extra.roles ? [{ path: 'roles', value: extra.roles }] : []),
    ...(extra.url ? [{ path: 'redis.url', value: extra.url }] : []),
    ...(extra.keyPrefix ? [{ path: 'redis.keyPrefix', value: extra.keyPrefix }] : []),
  ];
  return loadConfig({ plugins, env: {}, flags });
}

t.test('registerPlugin: a good plugin passes and its scripts are parsed', async (t) => {
  const scripts = join(dir, 'good-lua');
  mkdirSync(scripts);
  writeFileSync(join(scripts, 'markRole.lua'), '-- markRole: marks a role.\n-- KEYS[1] mark\n-- ARGV[1] value\nreturn redis.call("SET", KEYS[1], ARGV[1])\n');
  const registered = registerPlugin(recorder([], { scripts }));
  t.equal(registered.plugin.name, 'recorder');
  t.same(registered.scripts.map((s) => s.name), ['markRole']);
});

t.test('registerPlugin: each bad plugin gets its own named error', async (t) => {
  const ok = recorder([]);
  const badScripts = join(dir, 'bad-lua');
  mkdirSync(badScripts);
  writeFileSync(join(badScripts, 'oops.lua'), '-- KEYS[1] nothere\nreturn 1\n');
  const cases: [string, unknown, string][] = [
    ['not an object', 42, 'not a plugin: expected an object with name, version, coord, contract, config and roles, got number'],
    ['bad name', { ...ok, name: 'My_Plugin' }, 'plugin name "My_Plugin" is not valid: expected lower case letters, digits and dashes, e.g. "browser-grid"'],
    ['reserved name', { ...ok, name: 'redis' }, 'plugin redis: the name is reserved (redis, log, roles, plugins, modules are config sections)'],
    ['version not semver', { ...ok, version: '1.x' }, 'plugin recorder: version "1.x" is not a semver version such as 1.2.3'],
    ['coord not a range', { ...ok, coord: 'soon' }, 'plugin recorder: coord "soon" is not a semver range such as ^0.1.0'],
    ['coord range not met', { ...ok, coord: '^2.0.0' }, 'plugin recorder: needs coord ^2.0.0, but this is coord 0.1.0'],
    ['no description', { ...ok, description: '' }, 'plugin recorder: description is missing: one sentence on what the plugin does'],
    ['no contract', { ...ok, contract: undefined }, 'plugin recorder: contract is missing: declare the keyspace with defineContract({...})'],
    ["someone else's contract", { ...ok, contract: { ...ok.contract, plugin: 'other' } }, 'plugin recorder: contract belongs to plugin "other", expected "recorder"'],
    [
      'bad contract',
      { ...ok, contract: { plugin: 'recorder', keys: { k: { ...ok.contract.keys.mark, type: 'blob' } } } },
      'plugin recorder: bad contract: contract recorder, key k: type "blob" is not string, hash, set, zset, list or stream',
    ],
    ['scripts folder missing', { ...ok, scripts: join(dir, 'nowhere') }, `plugin recorder: scripts folder ${join(dir, 'nowhere')} does not exist`],
    ['bad script', { ...ok, scripts: badScripts }, 'plugin recorder: bad script: script oops: KEYS[1] names "nothere", which is not a key of contract recorder'],
    ['no config schema', { ...ok, config: {} }, "plugin recorder: config.schema is missing: a JSON Schema of the plugin's config section, with defaults"],
    ['schema not an object', { ...ok, config: { schema: { type: 'string' } } }, "plugin recorder: config.schema must describe an object (type: 'object'), got type \"string\""],
    [
      'schema does not compile',
      { ...ok, config: { schema: { type: 'object', properties: { n: { type: 'integr' } } } } },
      'plugin recorder: config.schema does not compile: schema is invalid: data/properties/n/type must be equal to one of the allowed values, data/properties/n/type must be array, data/properties/n/type must match a schema in anyOf',
    ],
    [
      'env names a missing option',
      { ...ok, config: { ...ok.config, env: { LABEL: 'lable' } } },
      'plugin recorder: config.env maps LABEL to "lable", which is not a property of config.schema',
    ],
    [
      'flag names a missing option',
      { ...ok, config: { ...ok.config, flags: { label: 'lable' } } },
      'plugin recorder: config.flags maps --label to "lable", which is not a property of config.schema',
    ],
    [
      'flag name with dashes in front',
      { ...ok, config: { ...ok.config, flags: { '--label': 'label' } } },
      'plugin recorder: config.flags has "--label": a flag name is lower case letters, digits and dashes, without the leading --',
    ],
    ['no roles', { ...ok, roles: {} }, 'plugin recorder: declares no roles: expected roles: { name: (ctx) => Role }'],
    ['role not a function', { ...ok, roles: { a: {} } }, 'plugin recorder: role a is not a function (ctx) => Role'],
    ['bad role name', { ...ok, roles: { 'a b': () => ({}) } }, 'plugin recorder: role name "a b" is not valid: expected letters, digits, _ and -'],
    ['unknown default role', { ...ok, defaultRoles: ['a', 'z'] }, 'plugin recorder: defaultRoles names "z", which is not one of its roles (a, b, c)'],
    ['bad command', { ...ok, commands: [{ name: 'x' }] }, 'plugin recorder: commands[0] needs a name, a description and a run(options, args) function'],
    ['bad scenario', { ...ok, scenarios: [{ name: 's' }] }, 'plugin recorder: scenarios[0] needs a name and a run(ctx) function'],
    ['named after the modules section', { ...ok, name: 'modules' }, 'plugin modules: the name is reserved (redis, log, roles, plugins, modules are config sections)'],
  ];
  for (const [what, candidate, message] of cases) t.equal(pluginError(candidate), message, what);
});

t.test('roles to start: defaults, or the ones asked for in the plugin order', async (t) => {
  const p = recorder([], { defaultRoles: ['b', 'a'] });
  t.same(rolesToStart(p, []), ['b', 'a'], 'defaultRoles when none are asked for');
  t.same(rolesToStart(recorder([]), []), ['a', 'b', 'c'], 'all, in declaration order, without defaultRoles');
  t.same(rolesToStart(p, ['c', 'a']), ['a', 'c'], 'asked-for roles in the plugin order: defaultRoles first, then as declared');
});

t.test('a process on real Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());

  t.test('starts in order, stops in reverse, with the injected clock, logger and backend', async (t) => {
    const events: string[] = [];
    const plugin = recorder(events);
    const logger = memoryLogger();
    const clock: Clock = { now: () => 1234, sleep: async () => {} };
    const backend = await createBackend({ url: redis.url });
    t.teardown(() => backend.close());
    const config = configFor([plugin], { keyPrefix: '{t1}:' });
    const handle = await startRoles({ plugins: [plugin], config, logger, clock, backend });

    t.same(handle.roles, [
      { plugin: 'recorder', role: 'a' },
      { plugin: 'recorder', role: 'b' },
      { plugin: 'recorder', role: 'c' },
    ]);
    t.ok(handle.role('recorder', 'b') && typeof handle.role('recorder', 'b')!.stop === 'function', 'a started role is reachable from the handle, as its factory returned it');
    t.equal(handle.role('recorder', 'z'), undefined, 'a role that does not run here is not');
    t.equal(handle.backend, backend, 'the injected backend is the one used');
    t.equal(await backend.send(['GET', '{t1}:mark:b']), '1234', 'roles wrote through the injected backend, under the prefix, with the injected clock');
    t.same(
      logger.lines.filter((l) => l.msg.endsWith('is up')).map((l) => [l.msg, l.fields]),
      ['a', 'b', 'c'].map((r) => [`${r} is up`, { plugin: 'recorder', role: r }]),
      "each role's logger is a child of the injected one, bound to plugin and role",
    );

    const first = handle.stop('SIGTERM');
    const second = handle.stop('again');
    t.equal(first, second, 'stop is idempotent: the same promise');
    await first;
    t.same(events, [
      'start a',
      'start b',
      'start c',
      'stop c (SIGTERM, signal aborted: true)',
      'stop b (SIGTERM, signal aborted: true)',
      'stop a (SIGTERM, signal aborted: true)',
    ]);
    t.ok(handle.signal.aborted, 'the process signal is aborted');
    t.same(
      logger.lines.filter((l) => l.msg === 'role stopped').map((l) => l.fields.role),
      ['c', 'b', 'a'],
    );
    t.equal(await backend.send(['PING']), 'PONG', 'an injected backend stays open: its owner closes it');
  });

  t.test('a role that fails to start stops the ones started before it', async (t) => {
    const events: string[] = [];
    const plugin = recorder(events);
    const failing = {
      ...plugin,
      roles: {
        ...plugin.roles,
        b: () => ({
          start: async () => {
            throw new Error('port 8080 is taken');
          },
          stop: async () => void events.push('stop b'),
        }),
      },
    };
    const logger = memoryLogger();
    const backend = await createBackend({ url: redis.url });
    t.teardown(() => backend.close());
    await t.rejects(
      startRoles({ plugins: [failing], config: configFor([failing]), logger, backend }),
      new StartError('role b of plugin recorder failed to start: port 8080 is taken'),
    );
    t.same(events, ['start a', 'stop a (role b of plugin recorder failed to start, signal aborted: true)'], 'a stopped, c never started');
    const errors = logger.lines.filter((l) => l.level === 'error');
    t.same(errors.map((l) => [l.msg, l.fields]), [['role failed to start', { plugin: 'recorder', role: 'b', error: 'port 8080 is taken' }]], 'one log line');
  });

  t.test('a role whose stop throws is logged and the others still stop', async (t) => {
    const events: string[] = [];
    const plugin = recorder(events);
    const faulty = {
      ...plugin,
      roles: {
        ...plugin.roles,
        b: () => ({
          start: async () => void events.push('start b'),
          stop: async () => {
            throw new Error('drain timed out');
          },
        }),
      },
    };
    const logger = memoryLogger();
    const backend = await createBackend({ url: redis.url });
    t.teardown(() => backend.close());
    const handle = await startRoles({ plugins: [faulty], config: configFor([faulty]), logger, backend });
    await handle.stop('SIGINT');
    t.same(events.filter((e) => e.startsWith('stop')).map((e) => e.slice(0, 6)), ['stop c', 'stop a']);
    t.same(
      logger.lines.filter((l) => l.level === 'error').map((l) => [l.msg, l.fields]),
      [['role failed to stop', { plugin: 'recorder', role: 'b', reason: 'SIGINT', error: 'drain timed out' }]],
    );
  });

  t.test('--role picks roles; the backend a function opens from config.redis is used and closed', async (t) => {
    const events: string[] = [];
    const plugin = recorder(events);
    const handle = await startRoles({ plugins: [plugin], config: configFor([plugin], { roles: ['c', 'a'], url: redis.url, keyPrefix: '{t2}:' }), backend: connectBackend });
    t.equal(handle.backend.name, 'ioredis', 'a Redis URL gets the ioredis adapter by default');
    t.same(handle.roles.map((r) => r.role), ['a', 'c']);
    const check = await createBackend({ url: redis.url });
    t.teardown(() => check.close());
    t.equal(await check.send(['EXISTS', '{t2}:mark:a', '{t2}:mark:b', '{t2}:mark:c']), 2, 'a and c ran, b did not');
    await handle.stop('test over');
    await t.rejects(handle.backend.send(['PING']), 'the backend the runtime made is closed by stop');
  });

  t.test("a role's scripts run by name, with keys built under the deployment prefix", async (t) => {
    const scripts = join(dir, 'ctx-lua');
    mkdirSync(scripts);
    writeFileSync(join(scripts, 'markRole.lua'), '-- markRole: marks a role.\n-- KEYS[1] mark\n-- ARGV[1] value\nreturn redis.call("SET", KEYS[1], ARGV[1])\n');
    const plugin = recorder([], {
      scripts,
      roles: {
        a: (ctx: RoleContext) => ({
          start: async () => void (await ctx.scripts.run('markRole', { keys: { mark: { role: 'a' } }, args: { value: String(ctx.config.label) } })),
          stop: async () => {},
        }),
      },
    });
    const backend = await createBackend({ url: redis.url });
    t.teardown(() => backend.close());
    const handle = await startRoles({ plugins: [plugin], config: configFor([plugin], { keyPrefix: '{t3}:' }), backend });
    await handle.stop('done');
    t.equal(await backend.send(['GET', '{t3}:mark:a']), 'rec', "the script ran with the plugin's config default as its argument");
  });

  t.test('two plugins in one process get their own sections and contexts', async (t) => {
    const seen: Record<string, unknown> = {};
    const make = (name: string): Plugin =>
      recorder([], {
        name,
        contract: { plugin: name, keys: {} },
        config: { schema: { type: 'object', properties: { label: { type: 'string', default: `label of ${name}` } } } },
        roles: { main: (ctx: RoleContext) => ({ start: async () => void (seen[name] = [ctx.config.label, ctx.roles]), stop: async () => {} }) },
      });
    const plugins = [make('one'), make('two')];
    const backend = await createBackend({ url: redis.url });
    t.teardown(() => backend.close());
    const handle = await startRoles({ plugins, config: configFor(plugins), backend });
    await handle.stop('done');
    t.same(seen, { one: ['label of one', ['main', 'main']], two: ['label of two', ['main', 'main']] });
    await t.rejects(startRoles({ plugins: [plugins[0]!, plugins[0]!], config: configFor([plugins[0]!]), backend }), new PluginError('plugin one is registered twice'));
  });
});

t.test('an unreachable Redis fails before any role starts', async (t) => {
  const events: string[] = [];
  const plugin = recorder(events);
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const err = await startRoles({ plugins: [plugin], config: configFor([plugin], { url }), backend: connectBackend }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof ConnectionError, 'a ConnectionError');
  t.match((err as Error).message, `cannot reach Redis at ${url}: connect ECONNREFUSED`, 'saying where and why');
  t.same(events, [], 'no role started');
});


t.test('no backend given nor registered: a StartError that says how to give one', async (t) => {
  const plugin = recorder([]);
  await t.rejects(startRoles({ plugins: [plugin], config: configFor([plugin]) }), {
    name: 'StartError',
    message: /^no backend: pass backend \(a Backend, or a function that opens one such as connectBackend/,
  });
});

t.test("a role finds another role of its plugin in this process (ctx.peer), as that role's factory returned it", async (t) => {
  const seen: Record<string, unknown> = {};
  const plugin = recorder([], {
    roles: {
      a: () => ({ start: async () => {}, stop: async () => {}, answer: 42 }),
      b: (ctx: RoleContext) => ({
        start: async () => void (seen.a = ctx.peer<{ answer: number } & Role>('a')?.answer),
        stop: async () => void (seen.c = ctx.peer('c')),
      }),
    },
  });
  const backend = await createBackend({ url: 'embedded://peer' });
  t.teardown(() => backend.close());
  const handle = await startRoles({ plugins: [plugin], config: configFor([plugin]), backend });
  t.equal(handle.role<{ answer: number } & Role>('recorder', 'a')?.answer, 42, "the handle reaches a's own object too");
  await handle.stop('done');
  t.same(seen, { a: 42, c: undefined }, "b saw a's own object; c, which does not exist, is undefined");
});
