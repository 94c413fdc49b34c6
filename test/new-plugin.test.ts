// `coord new plugin NAME` makes a plugin folder, filled in (no placeholder
// left), whose dev dependency on coordkit is the coord that made it, and which
// `coord run --plugin ./NAME` and `coord conformance --plugin ./NAME` take as
// made, with no install step: its imports of coordkit get the running coord.
// (Its own `npm install && npm test` from a packed tarball is
// package-tarball.test.ts.) Bad names are one line each.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

t.before(() => buildIfStale());
const redis = await startRedis();
t.teardown(() => redis.stop());
const work = mkdtempSync(join(tmpdir(), 'coord-new-'));
// Without the runner's TAP_* / NODE_OPTIONS settings: coord runs as a user runs it.
const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(k)));
const env = { ...inherited, REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_DEBUG: '', NO_COLOR: '1' };
const main = join(root, 'dist/bundle/coord.js');

function cli(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [main, ...args], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !join(e.parentPath, e.name).includes('node_modules'))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const plugin = join(work, 'job-queue');

t.test('coord new plugin job-queue: a filled-in folder', async (t) => {
  const r = cli(work, 'new', 'plugin', 'job-queue');
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^made plugin job-queue in \.\/job-queue \(\d+ files\)\n/);
  t.match(r.stdout, 'cd ./job-queue && npm install && npm test');
  t.same(files(plugin), [
    '.gitignore', 'README.md', 'config.ts', 'context.ts', 'contract.ts', 'index.ts', 'lua/touchMember.lua', 'package.json', 'roles/member.ts', 'scenarios.ts', 'scripts.gen.ts',
    'test/plugin.test.ts', 'tsconfig.json',
  ]);
  for (const file of files(plugin)) t.notMatch(readFileSync(join(plugin, file), 'utf8'), /__[A-Z_]+__/, `${file}: no placeholder left`);
  const pkg = JSON.parse(readFileSync(join(plugin, 'package.json'), 'utf8'));
  t.match(pkg, { name: 'job-queue', type: 'module', peerDependencies: { coordkit: '^0.1.0' }, scripts: { test: 'tap' } });
  t.equal(resolve(plugin, pkg.devDependencies.coordkit.replace(/^file:/, '')), root, 'its dev dependency links the coord that made it');
  t.equal(readdirSync(plugin).includes('node_modules'), false, 'nothing installed');
  t.match(readFileSync(join(plugin, 'index.ts'), 'utf8'), "name: 'job-queue'");
  t.match(readFileSync(join(plugin, 'config.ts'), 'utf8'), "JOB_QUEUE_MEMBER_ID: 'memberId'", 'env names from the plugin name');
});

t.test('coord run --plugin ./job-queue runs it with no install step (Node, TypeScript transpiled on load)', async (t) => {
  const child = spawn(process.execPath, [main, 'run', '--plugin', './job-queue', '--redis', redis.url, '--prefix', '{new}:', '--set', 'job-queue.memberId=m1', '--log-format', 'json'], {
    cwd: work,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${err}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => ((out += d), /"msg":"ready"/.test(out) && (clearTimeout(timer), resolve())));
  });
  t.match(out, /"memberId":"m1","msg":"member registered"/);
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'stops on SIGTERM');
  const schema = cli(work, 'schema', '--plugin', './job-queue');
  t.equal(schema.status, 0, schema.stderr);
  t.match(schema.stdout, '# Keyspace of plugin `job-queue`');
});

t.test('coord conformance --plugin ./job-queue holds it to its contract, with no install step', async (t) => {
  const r = cli(work, 'conformance', '--plugin', './job-queue', '--adapter', 'embedded');
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^contract job-queue on embedded\s+\S/m, 'its contract suite ran');
  t.match(r.stdout, /sections, 0 failed$/m);
  t.equal(readdirSync(plugin).includes('node_modules'), false, 'still nothing installed');
});

t.test('bad names and places: one line, exit 2, nothing made', async (t) => {
  const oneLine = (r: ReturnType<typeof cli>, message: string) => {
    t.equal(r.status, 2, `exit 2: ${r.stderr}`);
    t.equal(r.stderr, `coord: ${message}\n`);
  };
  oneLine(cli(work, 'new', 'plugin', 'Job_Queue'), 'plugin name "Job_Queue" is not valid: expected lower case letters, digits and dashes, e.g. "job-queue"');
  oneLine(cli(work, 'new', 'plugin', 'browser-grid'), 'plugin name "browser-grid" is taken by a built-in plugin: choose another');
  oneLine(cli(work, 'new', 'plugin', 'redis'), 'plugin name "redis" is reserved (redis, log, roles, plugins, modules are config sections)');
  oneLine(cli(work, 'new', 'plugin', 'job-queue'), `cannot make plugin job-queue: ${plugin} exists and is not empty`);
  oneLine(cli(work, 'new', 'adapter', 'x'), 'coord new makes plugins only: coord new plugin NAME (got "adapter")');
  t.equal(existsSync(join(work, 'Job_Queue')), false);
  writeFileSync(join(work, 'keep.txt'), '');
  const elsewhere = cli(work, 'new', 'plugin', 'other', '--dir', 'plugins/other');
  t.equal(elsewhere.status, 0, elsewhere.stderr);
  t.ok(existsSync(join(work, 'plugins/other/index.ts')), '--dir puts it there');
  const pinned = cli(work, 'new', 'plugin', 'pinned', '--coord', '^0.1.0');
  t.equal(pinned.status, 0, pinned.stderr);
  t.equal(JSON.parse(readFileSync(join(work, 'pinned/package.json'), 'utf8')).devDependencies.coordkit, '^0.1.0', '--coord sets the dev dependency');
});

t.test('inside a project npm init made (CommonJS), the plugin type-checks: its folder says "type": "module"', async (t) => {
  // npm 11's `npm init -y` writes "type": "commonjs"; without a package.json of its own the
  // plugin's .ts files would be CommonJS there, and tsc would refuse their imports (TS1295).
  const project = mkdtempSync(join(tmpdir(), 'coord-new-cjs-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'commonjs' }));
  // What the plugin's own `npm install` would bring, linked from this checkout: coordkit itself, tap, @types/node.
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules/coordkit'));
  symlinkSync(join(root, 'node_modules/tap'), join(project, 'node_modules/tap'));
  symlinkSync(join(root, 'node_modules/@types'), join(project, 'node_modules/@types'));
  const made = cli(project, 'new', 'plugin', 'demo');
  t.equal(made.status, 0, made.stderr);
  t.equal(JSON.parse(readFileSync(join(project, 'demo/package.json'), 'utf8')).type, 'module', 'the plugin folder has its own "type": "module"');
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'demo'], { cwd: project, env, encoding: 'utf8', timeout: 300_000 });
  t.equal(tsc.status, 0, 'tsc -p demo passes', { output: `${tsc.stdout}${tsc.stderr}`.slice(-3000) });
  t.notMatch(tsc.stdout, /TS1295/);
});
