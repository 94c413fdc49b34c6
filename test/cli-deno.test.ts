// The same CLI on Deno, which runs the sources (cli/main.ts) with the npm
// packages mapped in deno.json: the key cases of cli.test.ts. The Deno binary
// comes from the `deno` npm package (what `npx deno` runs); it is spawned
// directly so a signal reaches Deno itself rather than a wrapper.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { coord, oneLineError, root } from './support/cli.ts';
import { freePort } from './support/redis.ts';

const deno = join(root, 'node_modules/deno/deno');
const echo = './test/fixtures/plugins/echo/index.js';
const env = { ...process.env, REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_LOG_LEVEL: '', COORD_DEBUG: '', NO_COLOR: '1' };
const dir = mkdtempSync(join(tmpdir(), 'coord-cli-deno-'));

function cli(...args: string[]) {
  const r = spawnSync(deno, ['run', '-A', 'cli/main.ts', ...args], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('--help and --version', async (t) => {
  const help = cli('--help');
  t.equal(help.status, 0, help.stderr);
  for (const command of ['run', 'plugins', 'schema', 'inspect', 'conformance', 'config']) t.match(help.stdout, new RegExp(`^  ${command}\\s`, 'm'));
  const version = cli('run', '--version');
  t.equal(version.status, 0);
  t.match(version.stdout, /^coord 0\.1\.0 \(deno \d+\./, 'the version, and that this is Deno');
});

t.test('plugins, schema and config --dump', async (t) => {
  const plugins = cli('plugins', '--plugin', echo);
  t.equal(plugins.status, 0, plugins.stderr);
  t.match(plugins.stdout, 'echo 1.0.0  Two roles that each write a greeting key (test fixture)\n  roles: first, second');

  const schema = cli('schema', '--plugin', echo, '--format', 'json');
  t.equal(schema.status, 0, schema.stderr);
  t.equal(JSON.parse(schema.stdout).contract.plugin, 'echo');

  const dump = cli('config', '--dump', '--plugin', echo, '--redis', 'redis://u:pw@h:1', '--set', 'echo.repeat=4');
  t.equal(dump.status, 0, dump.stderr);
  const config = parseYaml(dump.stdout);
  t.equal(config.redis.url, 'redis://u:***@h:1');
  t.same(config.plugins.echo, { greeting: 'hello', repeat: 4, stopDelayMs: 0 });
});

t.test('errors: one line each, with the exit codes of Node', async (t) => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'plugins:\n  echo:\n    repeat: many\n');
  oneLineError(t, cli('run', '--plugin', echo, '--config', bad), 2, 'coord: config: echo.repeat = "many" (from bad.yaml:3): expected integer >= 1');
  oneLineError(t, cli('run', '--plugin', 'no-such-plugin'), 2, /^coord: unknown plugin "no-such-plugin"/);
  oneLineError(t, cli('run', '--plugin', echo, '--bogus'), 2, 'coord: unknown option --bogus (see --help)');
  const port = await freePort();
  oneLineError(t, cli('run', '--plugin', echo, '--redis', `redis://127.0.0.1:${port}`), 1, new RegExp(`^coord: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: `));
});

t.test('conformance runs on Deno too (its runner is node:assert)', async (t) => {
  const r = cli('conformance', '--plugin', echo, '--adapter', 'embedded');
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^contract echo on embedded\s+both roles write their greeting\s+\d+\s+0\s+0$/m, "the fixture plugin's contract");
  t.match(r.stdout, /\d+ sections, 0 failed\n$/);
});

t.test('run: ready, then SIGTERM stops the roles in reverse and exits 0', async (t) => {
  const child = spawn(deno, ['run', '-A', 'cli/main.ts', 'run', '--plugin', echo, '--log-format', 'json'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  const lines: { msg: string; role?: string; roles?: string[] }[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`not ready within 60 s; stderr: ${stderr}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const part of parts) {
        const line = JSON.parse(part);
        lines.push(line);
        if (line.msg === 'ready') (clearTimeout(timer), resolve());
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code} before ready; stderr: ${stderr}`)));
  });
  t.same(lines.find((l) => l.msg === 'ready')!.roles, ['echo/first', 'echo/second']);
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exit 0');
  t.same(lines.filter((l) => l.msg === 'role started').map((l) => l.role), ['first', 'second']);
  t.same(lines.filter((l) => l.msg === 'role stopped').map((l) => l.role), ['second', 'first'], 'stopped in reverse order');
  t.equal(stderr, '');
});

t.test('Ctrl-C drains on Deno: one SIGINT, even delivered twice at once (the terminal and a wrapper)', async (t) => {
  for (const times of [1, 2]) {
    const p = coord(['run', '--plugin', echo, '--set', 'echo.stopDelayMs=500'], { ...env, COORD_LOG_FORMAT: 'json' }, 'deno');
    t.teardown(() => p.kill('SIGKILL'));
    await p.waitFor((l) => l.msg === 'ready', 60_000);
    for (let i = 0; i < times; i++) p.kill('SIGINT');
    t.equal(await p.exited, 0, `${times} SIGINT: exit 0`);
    t.equal(p.stderr(), '', 'no "again while stopping"');
    t.same(p.lines.filter((l) => l.msg === 'echo role drained').map((l) => l.role), ['second', 'first'], 'both roles drained');
  }
});
