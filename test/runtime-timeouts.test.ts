// A role that hangs does not hang the process: a start past roleStartTimeout
// is a StartError naming the plugin and role (the roles started before it are
// stopped), and a stop past roleStopTimeout is logged, naming them, while the
// other roles still stop and stop() resolves. The roles here never settle, so
// nothing depends on how fast the machine is: only the timeouts end them.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { loadConfig } from '../core/config.ts';
import { memoryLogger } from '../core/logger.ts';
import type { Plugin, Role, RoleContext } from '../core/plugin.ts';
import { startRoles, StartError } from '../core/runtime.ts';
import { ConfigError } from '../entries/plugin.ts';

const never = () => new Promise<void>(() => {});

/** Plugin `stuck` with roles first, hung and last; `hung` hangs in `where`. */
function stuck(events: string[], where: 'start' | 'stop' | 'factory'): Plugin {
  const role =
    (name: string) =>
    (ctx: RoleContext): Role | Promise<Role> => {
      const made: Role = {
        async start() {
          events.push(`start ${name}`);
          if (name === 'hung' && where === 'start') await never();
        },
        async stop() {
          events.push(`stop ${name} (signal aborted: ${ctx.signal.aborted})`);
          if (name === 'hung' && where === 'stop') await never();
        },
      };
      return name === 'hung' && where === 'factory' ? never().then(() => made) : made;
    };
  return {
    name: 'stuck',
    version: '1.0.0',
    coord: '^0.1.0',
    description: 'has a role that never finishes starting or stopping',
    contract: { plugin: 'stuck', keys: {} },
    config: { schema: { type: 'object', properties: {} } },
    roles: { first: role('first'), hung: role('hung'), last: role('last') },
  } as Plugin;
}

const config = (plugin: Plugin, start: number, stop: number) =>
  loadConfig({ plugins: [plugin], env: {}, flags: [{ path: 'roleStartTimeout', value: String(start) }, { path: 'roleStopTimeout', value: String(stop) }] });

t.test('a start that never resolves: StartError naming plugin and role, the roles before it stopped', async (t) => {
  for (const where of ['start', 'factory'] as const) {
    const events: string[] = [];
    const plugin = stuck(events, where);
    const backend = await createBackend({ url: `embedded://timeouts-${where}` });
    t.teardown(() => backend.close());
    const err = await startRoles({ plugins: [plugin], config: config(plugin, 0.2, 5), backend }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof StartError, `${where}: a StartError`);
    t.equal((err as StartError).code, 'COORD_ERR_ROLE_START_TIMEOUT', `${where}: its own code`);
    t.match((err as Error).message, /^role hung of plugin stuck did not start within 0\.2 s \(roleStartTimeout\)/, `${where}: names plugin and role`);
    t.same(events, [...['start first'], ...(where === 'start' ? ['start hung'] : []), 'stop first (signal aborted: true)'], `${where}: first was stopped, last never started`);
  }
});

t.test('a stop that never resolves: logged naming plugin and role, the others stop, stop() resolves', async (t) => {
  const events: string[] = [];
  const plugin = stuck(events, 'stop');
  const logger = memoryLogger();
  const backend = await createBackend({ url: 'embedded://timeouts-stop' });
  t.teardown(() => backend.close());
  const handle = await startRoles({ plugins: [plugin], config: config(plugin, 5, 0.2), logger, backend });
  t.same(
    handle.roles.map((r) => r.role),
    ['first', 'hung', 'last'],
  );
  await handle.stop('test over');
  t.same(events, ['start first', 'start hung', 'start last', 'stop last (signal aborted: true)', 'stop hung (signal aborted: true)', 'stop first (signal aborted: true)']);
  const late = logger.lines.filter((e) => e.level === 'error');
  t.equal(late.length, 1, 'one error logged');
  t.match(late[0]!.msg, /^role hung of plugin stuck did not stop within 0\.2 s \(roleStopTimeout\)/);
  t.match(late[0]!.fields, { code: 'COORD_ERR_ROLE_STOP_TIMEOUT' });
});

t.test("a role's own stopTimeout, longer than roleStopTimeout, is waited for (a drain bounded by the plugin's config)", async (t) => {
  const events: string[] = [];
  const draining: Plugin = {
    ...stuck(events, 'stop'),
    roles: {
      drains: (): Role => ({
        stopTimeout: 60,
        async start() {},
        async stop() {
          await new Promise((r) => setTimeout(r, 1000)); // longer than roleStopTimeout below, shorter than its own
          events.push('drained');
        },
      }),
    },
  } as Plugin;
  const logger = memoryLogger();
  const backend = await createBackend({ url: 'embedded://timeouts-own' });
  t.teardown(() => backend.close());
  const handle = await startRoles({ plugins: [draining], config: config(draining, 5, 0.2), logger, backend });
  await handle.stop('test over');
  t.same(events, ['drained'], 'its stop ran to the end');
  t.same(logger.lines.filter((e) => e.level === 'error'), [], 'no timeout logged');
});

t.test('the timeouts default to 60 s and 30 s and must be positive seconds', async (t) => {
  const plugin = stuck([], 'start');
  const defaults = loadConfig({ plugins: [plugin], env: {} });
  t.equal(defaults.roleStartTimeout, 60);
  t.equal(defaults.roleStopTimeout, 30);
  const fromEnv = loadConfig({ plugins: [plugin], env: { COORD_ROLE_START_TIMEOUT: '120', COORD_ROLE_STOP_TIMEOUT: '2.5' } });
  t.equal(fromEnv.roleStartTimeout, 120);
  t.equal(fromEnv.roleStopTimeout, 2.5);
  t.throws(() => config(plugin, 0, 30), ConfigError, 'zero is refused');
  t.throws(() => loadConfig({ plugins: [plugin], env: { COORD_ROLE_STOP_TIMEOUT: 'soon' } }), ConfigError, 'text is refused');
});
