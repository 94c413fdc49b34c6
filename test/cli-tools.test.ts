// What the CLI gives a plugin command besides connect(): table() lays out
// columns (numbers right-aligned), print/printErr write where they say, and
// start() starts the plugin's roles as coord run does.
import t from 'tap';
import { commandTools } from '../cli/command-tools.ts';
import { loadConfig } from '../core/config.ts';
import type { Role } from '../core/plugin.ts';
import loadTest from '../plugins/load-test/index.ts';
import plugin from '../plugins/obniz/index.ts';
import { statusTables } from '../plugins/obniz/commands.ts';

const lines = { out: [] as string[], err: [] as string[] };
const tools = commandTools(plugin, {}, { out: (l) => lines.out.push(l), err: (l) => lines.err.push(l) });

t.test('table: a header, a rule, columns as wide as their widest cell; numbers right-aligned', async (t) => {
  t.equal(
    tools.table(['slave', 'devices', 'state'], [['s1', 12, 'alive'], ['slave-two', 3, 'dead']]),
    ['slave      devices  state', '---------  -------  -----', 's1              12  alive', 'slave-two        3  dead'].join('\n'),
  );
  t.match(
    statusTables({ slaves: [], managers: [{ name: 'm1', alive: true, heartbeatAgeMs: 1500 }], devices: 0, running: 0 } as never, tools.table),
    /^no slaves\n\nmanager {2}state {2}heartbeat\n-{7} {2}-{5} {2}-{9}\nm1 {7}alive {2}1\.5s ago\n/,
    "a plugin's status tables are laid out by it",
  );
});

t.test('print and printErr write to standard output and standard error', async (t) => {
  tools.print('result');
  tools.printErr('a note');
  t.same(lines, { out: ['result'], err: ['a note'] });
});

t.test("start: the plugin's roles in this process, on the backend the config names", async (t) => {
  const config = loadConfig({ plugins: [loadTest], env: {}, flags: [{ path: 'roles', value: ['worker'] }, { path: 'log.level', value: 'error' }] });
  const handle = await commandTools(loadTest, {}, { out: () => {}, err: () => {} }).start(config);
  t.teardown(() => handle.stop('test over'));
  t.same(handle.roles, [{ plugin: 'load-test', role: 'worker' }]);
  t.match(handle.backend.displayUrl, /^embedded:/, 'no Redis named: the embedded backend');
  t.type(handle.role<Role>('load-test', 'worker')?.stop, 'function', 'the started role is reachable from the handle');
  await handle.stop('done');
  await t.rejects(handle.backend.send(['PING']), 'the backend it opened is closed with the process');
});
