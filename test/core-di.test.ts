// The DI container earns its place: an application (or a test) registers its
// own clock, logger or backend in a container it hands startProcess, and the
// roles get them — here a real role, the load-test worker, whose heartbeat
// carries the fake clock's time. The process runs in a child of that
// container (the application's stays as it was), each plugin in a child of the
// process's, where configurePlugin replaces what only that plugin's roles get.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { loadConfig } from '../core/config.ts';
import { keyBuilders } from '../core/contract.ts';
import { processContainer, tokens } from '../core/di.ts';
import { memoryLogger } from '../core/logger.ts';
import type { Plugin, RoleContext } from '../core/plugin.ts';
import { startRoles as startCore } from '../core/runtime.ts';
import { startProcess } from '../entries/start-process.ts';
import loadTest from '../plugins/load-test/index.ts';
import { contract } from '../plugins/load-test/contract.ts';
import type { WorkerRole } from '../plugins/load-test/roles/worker.ts';

/** A clock stuck at `at` (its sleeps are real, so loops still wait). */
const fixedClock = (at: number): Clock => ({ now: () => at, sleep: systemClock.sleep });

t.test("a container's clock, logger and backend reach a real role: the load-test worker's heartbeat", async (t) => {
  const backend = await createBackend({ url: 'embedded://core-di' });
  t.teardown(() => backend.close());
  const logger = memoryLogger();
  const app = processContainer();
  app.register(tokens.Clock, { useValue: fixedClock(1_700_000_000_000) });
  app.register(tokens.Logger, { useValue: logger });
  app.register(tokens.Backend, { useValue: backend });

  const config = loadConfig({ plugins: [loadTest], env: {}, flags: [{ path: 'roles', value: ['worker'] }, { path: 'redis.keyPrefix', value: '{di}:' }] });
  // The embedding entry's startProcess: it opens no backend of its own when the container has one.
  const handle = await startProcess({ plugins: [loadTest], config, container: app });
  t.equal(handle.backend, backend, "the container's backend is the process's");
  const worker = handle.role<WorkerRole>('load-test', 'worker')!;
  const status = keyBuilders(contract, '{di}:').workerStatus({ workerId: worker.id });
  t.equal(await backend.send(['HGET', status, 'last_heartbeat']), '1700000000.000', "the heartbeat carries the container's clock");
  t.ok(
    logger.lines.some((l) => l.msg === 'worker registered' && l.fields.plugin === 'load-test' && l.fields.role === 'worker'),
    "the worker logs through the container's logger, bound to plugin and role",
  );
  t.equal(handle.container.resolve(tokens.Config), config, 'the process container holds the config');
  t.notOk(app.isRegistered(tokens.Config), "the application's container is left as it was");

  await handle.stop('done');
  t.equal(await backend.send(['PING']), 'PONG', "the container's backend is the application's: stop leaves it open");
});

/** A plugin whose one role writes its clock's time to `at` when it starts. */
function stamper(name: string): Plugin {
  return {
    name,
    version: '1.0.0',
    coord: '^0.1.0',
    description: 'writes the time it started',
    contract: { plugin: name, keys: { at: { pattern: `${name}:at`, type: 'string', description: 'when the role started', ttl: 'none', writers: ['main'], value: { type: 'string' } } } },
    config: { schema: { type: 'object', properties: {} } },
    roles: {
      main: (ctx: RoleContext) => ({
        start: async () => void (await ctx.backend.send(['SET', ctx.keys.at(), String(ctx.clock.now())])),
        stop: async () => {},
      }),
    },
  };
}

t.test("configurePlugin replaces the clock in one plugin's child container only; options win over the container", async (t) => {
  const backend = await createBackend({ url: 'embedded://core-di-plugins' });
  t.teardown(() => backend.close());
  const plugins = [stamper('one'), stamper('two')];
  const config = loadConfig({ plugins, env: {} });
  const app = processContainer();
  app.register(tokens.Clock, { useValue: fixedClock(1000) });
  app.register(tokens.Backend, { useValue: backend });

  const handle = await startCore({
    plugins,
    config,
    container: app,
    configurePlugin: (plugin, container) => {
      if (plugin.name === 'two') container.register(tokens.Clock, { useValue: fixedClock(2000) });
    },
  });
  await handle.stop('done');
  t.same(await backend.send(['MGET', 'one:at', 'two:at']), ['1000', '2000'], "one has the process's clock, two its own");

  const again = await startCore({ plugins: [plugins[0]!], config: loadConfig({ plugins: [plugins[0]!], env: {} }), container: app, clock: fixedClock(3000) });
  await again.stop('done');
  t.equal(await backend.send(['GET', 'one:at']), '3000', 'the clock option wins over the container');
});
