// The built `coord` CLI (dist/bundle/coord.js) on Node, run as a user runs it: a
// child process per command line. Every error is one line on stderr with the
// documented exit code; `run` starts roles and stops them in reverse on SIGTERM.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { createBackend } from '../adapters/index.ts';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, oneLineError, type LogLine } from './support/cli.ts';
import { freePort, startRedis } from './support/redis.ts';

const echo = './test/fixtures/plugins/echo/index.js';
// The environment must not point the CLI at some other Redis.
const env = { REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_LOG_LEVEL: '', COORD_DEBUG: '' };
const dir = mkdtempSync(join(tmpdir(), 'coord-cli-'));

t.before(() => buildIfStale());

/** Runs the CLI to completion. */
function cli(...args: string[]) {
  return coordSync(args, env);
}

t.test('--help and --version, for coord and for each command', async (t) => {
  const help = cli('--help');
  t.equal(help.status, 0);
  for (const command of ['run', 'plugins', 'schema', 'inspect', 'conformance', 'config']) t.match(help.stdout, new RegExp(`^  ${command}\\s`, 'm'), `lists ${command}`);
  t.match(help.stdout, /^coord\/0\.1\.0/, 'names coord and its version');

  const runHelp = cli('run', '--help');
  t.equal(runHelp.status, 0);
  for (const flag of ['--plugin <name>', '--role <role>', '--config <file>', '--redis <url>', '--prefix <keyPrefix>', '--set <path=value>']) {
    t.match(runHelp.stdout, flag, `run --help shows ${flag}`);
  }
  t.match(runHelp.stdout, /^Options of each plugin \(--set PLUGIN\.KEY=VALUE/m, "run --help lists the plugins' own options");
  for (const [plugin, key] of [['browser-grid', 'maxConcurrentSessions'], ['webdriver', 'proxy.port'], ['load-test', 'workers'], ['obniz', 'devices']]) {
    t.match(runHelp.stdout, new RegExp(`^  ${plugin}\\s+[^]*\\b${key.replace('.', '\\.')}\\b`, 'm'), `run --help names ${plugin}'s ${key}`);
  }
  const gridHelp = cli('run', '--plugin', 'browser-grid', '--help');
  t.equal(gridHelp.status, 0);
  t.match(gridHelp.stdout, /^Options of plugin browser-grid \(--set browser-grid\.KEY=VALUE/m, 'with --plugin: that plugin in full');
  t.match(gridHelp.stdout, /^ {2}port\s+Proxy port .*\(default 8080, env PORT\)$/m, 'each key with its default and environment name');
  t.match(gridHelp.stdout, /^ {2}playwrightVersions\s/m);
  for (const args of [['--version'], ['-v'], ['run', '--version'], ['config', '--version']]) {
    const r = cli(...args);
    t.equal(r.status, 0);
    t.match(r.stdout, /^coord 0\.1\.0 \(node v\d+\./, `${args.join(' ')} prints the version`);
  }
});

t.test('plugins lists name, version, description and roles', async (t) => {
  const r = cli('plugins', '--plugin', echo);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, 'echo 1.0.0  Two roles that each write a greeting key (test fixture)\n  roles: first, second');
});

t.test('schema of a plugin: markdown by default, JSON on request', async (t) => {
  const md = cli('schema', '--plugin', echo);
  t.equal(md.status, 0, md.stderr);
  t.match(md.stdout, '# Keyspace of plugin `echo`');
  t.match(md.stdout, '| `echo:{role}` | string | none (never expires) | first, second | `greeting` |');
  t.match(md.stdout, '| `greeting` | string, length ≥ 1, default "hello" — What the roles write. | `ECHO_GREETING` |');
  const json = cli('schema', '--plugin', echo, '--format', 'json');
  t.equal(json.status, 0, json.stderr);
  const parsed = JSON.parse(json.stdout);
  t.equal(parsed.contract.plugin, 'echo');
  t.same(parsed.contract.keys.map((k: { entry: string }) => k.entry), ['greeting']);
  t.same(parsed.config.env, { ECHO_GREETING: 'greeting', ECHO_REPEAT: 'repeat' });
  oneLineError(t, cli('schema', '--plugin', echo, '--format', 'pdf'), 2, 'coord: --format pdf: expected md or json');
});

t.test('config --dump: the effective config as YAML, password masked', async (t) => {
  const file = join(dir, 'dump.yaml');
  writeFileSync(file, 'log:\n  level: warn\nplugins:\n  echo:\n    repeat: 2\n    greeting: from file\n');
  const r = coordSync(
    ['config', '--dump', '--plugin', echo, '--config', file, '--redis', 'redis://app:s3cret@db.example:6380', '--set', 'echo.repeat=3'],
    { ...env, ECHO_GREETING: 'from env' },
  );
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stdout, 's3cret', 'the password is not printed');
  t.same(parseYaml(r.stdout), {
    redis: { url: 'redis://app:***@db.example:6380', keyPrefix: '' },
    log: { level: 'warn', format: 'auto' },
    roles: [],
    roleStartTimeout: 60,
    roleStopTimeout: 30,
    plugins: { echo: { greeting: 'from env', repeat: 3, stopDelayMs: 0 } },
  });
});

t.test('config --check FILE', async (t) => {
  const good = join(dir, 'good.yaml');
  writeFileSync(good, 'plugins:\n  echo:\n    greeting: hi\n');
  const ok = cli('config', '--check', good, '--plugin', echo);
  t.equal(ok.status, 0, ok.stderr);
  t.equal(ok.stdout, `${good}: valid\n`);
  const bad = join(dir, 'bad-check.yaml');
  writeFileSync(bad, 'plugins:\n  echo:\n    greeting: ""\n');
  oneLineError(t, cli('config', '--check', bad, '--plugin', echo), 2, 'coord: config: echo.greeting = "" (from bad-check.yaml:3): expected string of at least 1 characters');
});

t.test('a bad config file: one line, exit 2, nothing started', async (t) => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'plugins:\n  echo:\n    repeat: many\n');
  oneLineError(t, cli('run', '--plugin', echo, '--config', bad), 2, /^coord: config: echo\.repeat = "many" \(from bad\.yaml:3\): expected integer >= 1$/);
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, 'log: [\n');
  oneLineError(t, cli('run', '--plugin', echo, '--config', broken), 2, new RegExp(`^coord: config: cannot parse ${broken}:\\d+:\\d+: `));
  oneLineError(t, cli('run', '--plugin', echo, '--config', join(dir, 'missing.yaml')), 2, `coord: config: cannot read config file ${join(dir, 'missing.yaml')}: no such file`);
  const envBad = coordSync(['run', '--plugin', echo], { ...env, ECHO_REPEAT: 'x' });
  oneLineError(t, envBad, 2, 'coord: config: echo.repeat = "x" (from env ECHO_REPEAT): expected integer >= 1');
});

t.test('an unknown plugin: one line, exit 2', async (t) => {
  oneLineError(t, cli('run', '--plugin', 'no-such-plugin'), 2, /^coord: unknown plugin "no-such-plugin" \(built in: .*; or give a module path such as \.\/my-plugin\.js\)$/);
  oneLineError(t, cli('schema', '--plugin', './test/fixtures/plugins/nothere.js'), 2, 'coord: cannot load plugin ./test/fixtures/plugins/nothere.js: no such file');
  oneLineError(t, cli('run'), 2, 'coord: run needs --plugin NAME (see coord plugins)');
});

t.test("a plugin whose config.flags takes one of coord run's own flags: one line, exit 2", async (t) => {
  const file = join(dir, 'flag-taker.mjs');
  const fixture = new URL('./fixtures/plugins/echo/index.js', import.meta.url).href;
  writeFileSync(file, `import echo from '${fixture}';\nexport default { ...echo, config: { ...echo.config, flags: { redis: 'greeting' } } };\n`);
  oneLineError(
    t,
    cli('run', '--plugin', file),
    2,
    'coord: plugin echo: config.flags has "redis", which coord run already takes (plugin, role, config, set, redis, redis-ca-file, redis-cert-file, redis-key-file, adapter, prefix, log-level, log-format, help, version)',
  );
});

t.test('bad flags and commands: one line, exit 2', async (t) => {
  oneLineError(t, cli('run', '--plugin', echo, '--bogus'), 2, 'coord: unknown option --bogus (see --help)');
  oneLineError(t, cli('plugins', '--verbose'), 2, 'coord: unknown option --verbose (see --help)');
  oneLineError(t, cli('run', '--plugin', echo, '--redis'), 2, 'coord: option --redis <url> value is missing (see --help)');
  oneLineError(t, cli('rnu'), 2, 'coord: unknown command "rnu": did you mean "run"? (see coord --help)');
  oneLineError(t, cli('run', '--plugin', echo, '--role', 'third'), 2, 'coord: config: roles[0] = "third" (from flag --role): expected one of first, second');
  oneLineError(t, cli('run', '--plugin', echo, '--redis', 'http://x'), 2, /^coord: config: redis\.url = "http:\/\/x" \(from flag --redis\): expected redis:\/\//);
  oneLineError(t, cli('config'), 2, 'coord: config needs --dump or --check FILE');
});

t.test('an unreachable Redis: one line, exit 1', async (t) => {
  const port = await freePort();
  oneLineError(t, cli('run', '--plugin', echo, '--redis', `redis://127.0.0.1:${port}`), 1, new RegExp(`^coord: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
});

t.test('COORD_DEBUG=1 adds the stack', async (t) => {
  const r = coordSync(['run', '--plugin', 'no-such-plugin'], { ...env, COORD_DEBUG: '1' });
  t.equal(r.status, 2);
  t.match(r.stderr, /^coord: unknown plugin "no-such-plugin"/);
  t.match(r.stderr, /\n\s+at /, 'a stack follows the line');
});

/** The log lines of one role event, in order: [role, …]. */
function order(lines: LogLine[], msg: string): unknown[] {
  return lines.filter((l) => l.msg === msg).map((l) => l.role);
}

t.test('run on the embedded backend: ready, then SIGTERM stops the roles in reverse and exits 0', async (t) => {
  const p = coord(['run', '--plugin', echo], env);
  t.teardown(() => p.kill('SIGKILL'));
  const ready = await p.waitFor((l) => l.msg === 'ready', 30_000);
  t.same(ready.roles, ['echo/first', 'echo/second']);
  t.equal(ready.redis, 'embedded://default', 'standalone: the embedded backend');
  t.same(order(p.lines, 'role started'), ['first', 'second'], 'one line per role, in start order');
  p.kill('SIGTERM');
  t.equal(await p.exited, 0, 'exit 0');
  t.same(order(p.lines, 'role stopped'), ['second', 'first'], 'stopped in reverse order');
  t.same(
    p.lines.filter((l) => l.msg === 'echo role drained').map((l) => [l.role, l.reason]),
    [
      ['second', 'SIGTERM'],
      ['first', 'SIGTERM'],
    ],
    'each role drained with the signal as reason',
  );
  t.equal(p.stderr(), '', 'nothing on stderr');
});

t.test('on a real Redis: roles write under the prefix; plugin commands and inspect see the deployment', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const flags = ['--plugin', echo, '--redis', redis.url, '--prefix', '{e2e}:'];
  const p = coord(['run', ...flags, '--set', 'echo.greeting=hi'], env);
  t.teardown(() => p.kill('SIGKILL'));
  await p.waitFor((l) => l.msg === 'ready', 30_000);

  const check = await createBackend({ url: redis.url });
  t.teardown(() => check.close());
  t.equal(await check.send(['GET', '{e2e}:echo:first']), 'hi from first');
  t.equal(await check.send(['GET', '{e2e}:echo:second']), 'hi from second');

  const show = cli('echo', 'show', ...flags);
  t.equal(show.status, 0, show.stderr);
  t.equal(show.stdout, 'first: hi from first\nsecond: hi from second\n', "a plugin's own command, on the deployment the flags name");
  const showJson = cli('echo', 'show', '--json', ...flags);
  t.same(JSON.parse(showJson.stdout), { first: 'hi from first', second: 'hi from second' }, 'with its own option');
  oneLineError(t, cli('echo', 'shwo', ...flags), 2, 'coord: unknown command "echo shwo": did you mean "echo show"? (have: echo show)');

  const clean = cli('inspect', ...flags);
  t.equal(clean.status, 0, clean.stderr);
  t.equal(clean.stdout, `no deviations in 2 keys under {e2e}: on ${redis.url}\n`);
  await check.send(['SET', '{e2e}:stray', 'x']);
  await check.send(['SET', '{e2e}:echo:first', '']);
  const dirty = cli('inspect', ...flags);
  t.equal(dirty.status, 1, 'exit 1 when the keyspace deviates');
  t.match(dirty.stdout, '{e2e}:stray');
  t.match(dirty.stdout, '{e2e}:echo:first');
  t.match(dirty.stdout, /2 deviation\(s\) from contract echo in 3 keys under \{e2e\}:/);
  oneLineError(t, cli('inspect', '--plugin', echo), 2, 'coord: inspect needs --redis URL: the deployment to check');

  p.kill('SIGINT');
  t.equal(await p.exited, 0, 'SIGINT stops it too');
  t.same(order(p.lines, 'role stopped'), ['second', 'first']);
  t.equal(await check.send(['EXISTS', '{e2e}:echo:second']), 0, 'the roles drained: their keys are gone');
});

t.test('a role that fails to start: the others stop, one line, exit 1', async (t) => {
  const p = coord(['run', '--plugin', echo, '--set', 'echo.failOn=second'], env);
  t.teardown(() => p.kill('SIGKILL'));
  t.equal(await p.exited, 1, 'exit 1');
  t.equal(p.stderr(), 'coord: role second of plugin echo failed to start: second was told to fail (failOn)\n');
  t.same(order(p.lines, 'role started'), ['first']);
  t.same(order(p.lines, 'role failed to start'), ['second'], 'logged once');
  t.same(order(p.lines, 'role stopped'), ['first'], 'the role started before it was stopped');
});

for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
  t.test(`a second ${signal} while stopping exits ${code} at once (128 + the signal, as a shell reports it)`, async (t) => {
    const p = coord(['run', '--plugin', echo, '--set', 'echo.stopDelayMs=60000'], env);
    t.teardown(() => p.kill('SIGKILL'));
    await p.waitFor((l) => l.msg === 'ready', 30_000);
    p.kill(signal);
    await p.waitFor((l) => l.msg === 'stopping');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // later than a repeat of the first one (below)
    p.kill(signal);
    t.equal(await p.exited, code, `exit ${code}`);
    t.equal(p.stderr(), `coord: ${signal} again while stopping: exiting now\n`);
    t.same(order(p.lines, 'role stopped'), [], 'it did not wait for the drain');
  });
}

t.test('a port in use: one line naming the port and its config key, exit 2', async (t) => {
  const port = await freePort();
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
  t.teardown(() => busy.close());
  const p = coord(['run', '--plugin', 'browser-grid', '--role', 'proxy', '--set', `browser-grid.port=${port}`], env);
  t.teardown(() => p.kill('SIGKILL'));
  t.equal(await p.exited, 2, 'exit 2: the user can fix it');
  t.equal(
    p.stderr(),
    `coord: role proxy of plugin browser-grid failed to start: port ${port} on 127.0.0.1 is already in use (browser-grid.port is ${port}: choose a free port with --set browser-grid.port=PORT)\n`,
  );
  t.notOk(
    p.lines.some((l) => /Redis unreachable/.test(l.msg)),
    'no "Redis unreachable" warning: the embedded backend closed because the process is ending',
  );
});

t.test("a modules: entry that does not load: one line naming the file, the key and the path", async (t) => {
  const file = join(dir, 'bad-module.yaml');
  writeFileSync(file, 'modules:\n  cron: ./nowhere/index.js\nplugins:\n  cron: {}\n');
  const message = `coord: config file ${file}: modules.cron = ./nowhere/index.js (${join(dir, 'nowhere/index.js')}): no such file`;
  oneLineError(t, cli('run', '--config', file), 2, message);
  oneLineError(t, cli('config', '--check', file), 2, message);
});

t.test('conformance runs the suites and prints a table', async (t) => {
  const r = cli('conformance', '--plugin', echo);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^suite\s+section\s+pass\s+fail\s+skip$/m);
  t.match(r.stdout, /^adapter embedded\s+replies\s+\d+\s+0\s+\d+$/m, 'the adapter suite on the embedded backend');
  t.match(r.stdout, /^contract echo on embedded\s+both roles write their greeting\s+\d+\s+0\s+0$/m, "the fixture plugin's contract");
  t.match(r.stdout, /\d+ sections, 0 failed\n$/);
  oneLineError(t, cli('conformance', '--adapter', 'ioredis', '--plugin', echo), 2, /^coord: adapter ioredis needs --redis URL/);
});

t.test('one signal delivered twice at once (the terminal and a wrapper that forwards it) still drains', async (t) => {
  const p = coord(['run', '--plugin', echo, '--set', 'echo.stopDelayMs=500'], env);
  t.teardown(() => p.kill('SIGKILL'));
  await p.waitFor((l) => l.msg === 'ready', 30_000);
  p.kill('SIGINT');
  p.kill('SIGINT');
  t.equal(await p.exited, 0, 'exit 0');
  t.equal(p.stderr(), '', 'no "again while stopping"');
  t.same(order(p.lines, 'role stopped'), ['second', 'first'], 'both roles drained');
});

t.test('a config file that is missing or not YAML says so, with where', async (t) => {
  oneLineError(t, cli('run', '--config', join(dir, 'missing.yaml')), 2, `coord: config: cannot read config file ${join(dir, 'missing.yaml')}: no such file`);
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, 'plugins:\n  echo: [\n');
  oneLineError(t, cli('run', '--config', broken), 2, new RegExp(`^coord: config: cannot parse ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:1: `));
  oneLineError(t, cli('config', '--check', join(dir, 'missing.yaml')), 2, /cannot read config file .*missing\.yaml: no such file/);
});

t.test('a misspelt plugin section in --set names the plugin', async (t) => {
  oneLineError(t, cli('config', '--dump', '--plugin', 'browser-grid', '--set', 'browsergrid.port=1'), 2,
    'coord: config: unknown key browsergrid (from flag --set browsergrid.port): did you mean plugin "browser-grid"? (e.g. --set browser-grid.… or plugins.browser-grid in a file)');
});

t.test("a plugin's command word lists its commands, each with its own flags", async (t) => {
  const expected: Record<string, [string, string][]> = {
    grid: [['grid status', '--json']],
    webdriver: [['webdriver sessions', '--json']],
    obniz: [['obniz status', '--json'], ['obniz relocate', '--force'], ['obniz request', '--device <obnizId>']],
    load: [['load run', '--scenario <file>'], ['load status', '']],
  };
  for (const [word, commands] of Object.entries(expected)) {
    const r = cli(word, '--help');
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, `$ coord ${word} <command> [options]`);
    for (const [command, flag] of commands) {
      const block = r.stdout.split('\n\n').find((b) => b.includes(`  $ coord ${command}\n`));
      t.ok(block, `${word} --help lists ${command}`);
      if (flag) t.match(block, new RegExp(`^\\s+${flag.replace(/[<>]/g, '.')}\\s+\\S`, 'm'), `${command}: its own ${flag}`);
    }
    t.match(r.stdout, new RegExp(`Options of every ${word} command:\n(.*\n)*  --redis <url>`), 'then the deployment flags they share');
  }
});

t.test('commands that read a deployment, without a Redis: say where the state of such a process is', async (t) => {
  for (const command of [['grid', 'status'], ['webdriver', 'sessions'], ['obniz', 'status']]) {
    oneLineError(t, cli(...command), 2, `coord: ${command.join(' ')} reads a deployment's Redis, and none is named (--redis URL, REDIS_URL, or redis.url in --config): a process started without one keeps its state in an embedded backend inside that process; ask the running process instead`);
  }
  t.match(cli('grid', 'status').stderr, '(curl http://127.0.0.1:8080/status, if it runs with this config)', "the grid's proxy port from the config");
});

t.test('a grid running without --redis: grid status names the port it really listens on, and forgets it once the process is gone', async (t) => {
  // A run folder of this test's own, so grids other tests run at the same time are not named.
  const runEnv = { ...env, XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'coord-run-')) };
  for (const [plugin, command, set] of [['browser-grid', ['grid', 'status'], 'browser-grid.port=0'], ['webdriver', ['webdriver', 'sessions'], 'webdriver.proxy.port=0']] as const) {
    const grid = coord(['run', '--plugin', plugin, '--role', 'proxy', '--set', set], runEnv);
    t.teardown(() => grid.kill('SIGKILL'));
    const listening = await grid.waitFor((l) => /proxy listening/.test(l.msg));
    const port = listening.port as number;
    t.ok(port > 0, `${plugin}: listening on port ${port}, chosen by the system`);
    const r = coordSync([...command], runEnv);
    t.equal(r.status, 2, `${command.join(' ')}: exit 2`);
    t.match(r.stderr, `ask the running process instead: curl http://127.0.0.1:${port}/status (proxy, pid ${grid.child.pid})`, 'names the real port and the process');
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    const status = await fetch(`http://127.0.0.1:${port}/status`);
    t.equal(status.status === 200 || status.status === 401, true, `and that address answers /status (HTTP ${status.status})`);
    await status.body?.cancel();
    grid.kill('SIGKILL');
    await grid.exited;
    t.notMatch(coordSync([...command], runEnv).stderr, `:${port}/`, 'killed -9: no longer named');
  }
});

t.test('some roles of a plugin without --redis: a warning that they cannot meet the others', async (t) => {
  const p = coord(['run', '--plugin', echo, '--role', 'first'], env);
  t.teardown(() => p.kill('SIGKILL'));
  const warning = await p.waitFor((l) => l.level === 40, 30_000);
  t.match(warning.msg, 'echo: roles first run on the embedded backend, which lives inside this process: they cannot meet roles (second) in other processes');
  await p.waitFor((l) => l.msg === 'ready');
  p.kill('SIGTERM');
  t.equal(await p.exited, 0);
  const all = coord(['run', '--plugin', echo, '--role', 'first', '--role', 'second'], env);
  t.teardown(() => all.kill('SIGKILL'));
  await all.waitFor((l) => l.msg === 'ready', 30_000);
  t.notOk(all.lines.some((l) => l.level === 40), 'all roles in one process: no warning');
  all.kill('SIGTERM');
  t.equal(await all.exited, 0);
});

t.test('a Redis password kept out of the command line: REDIS_URL, or a password file', async (t) => {
  const redis = await startRedis({ args: ['--requirepass', 'pa:ss/w0rd'] });
  t.teardown(() => redis.stop());
  const file = join(dir, 'redis-password');
  writeFileSync(file, 'pa:ss/w0rd\n');
  const plain = redis.url; // no password in it
  const denied = cli('inspect', '--plugin', echo, '--redis', plain);
  t.equal(denied.status, 1, 'without the password Redis refuses');
  for (const [how, args, extra] of [
    ['--set redis.passwordFile', ['--redis', plain, '--set', `redis.passwordFile=${file}`], {}],
    ['COORD_REDIS_PASSWORD_FILE', ['--redis', plain], { COORD_REDIS_PASSWORD_FILE: file }],
    ['REDIS_URL', [], { REDIS_URL: `redis://:${encodeURIComponent('pa:ss/w0rd')}@127.0.0.1:${redis.port}` }],
  ] as const) {
    const r = coordSync(['inspect', '--plugin', echo, ...args], { ...env, ...extra });
    t.equal(r.status, 0, `${how}: connects (${r.stderr})`);
    t.notMatch(args.join(' '), 'pa:ss', `${how}: the password is not on the command line`);
  }
  const dump = cli('config', '--dump', '--redis', plain, '--set', `redis.passwordFile=${file}`);
  t.match(parseYaml(dump.stdout).redis.url, /^redis:\/\/:\*\*\*@127\.0\.0\.1:/, 'a dump masks it');
  oneLineError(t, cli('config', '--dump', '--redis', plain, '--set', `redis.passwordFile=${join(dir, 'nope')}`), 2,
    `coord: config: redis.passwordFile = "${join(dir, 'nope')}" (from flag --set redis.passwordFile): cannot read it: no such file`);
});
