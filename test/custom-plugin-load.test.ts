// Loading a user's plugin, as a user's project holds it: by path (.js, .mjs,
// .ts with its own relative .ts imports, or a folder) and by npm package name
// (resolved from the project's node_modules, not coord's), on Node (the
// compiled CLI transpiles .ts with sucrase, no TypeScript installed) and on Deno (the
// sources, TypeScript natively). A plugin that cannot load is one line.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

t.before(() => buildIfStale());
const redis = await startRedis();
t.teardown(() => redis.stop());

// A user's project: coord installed in node_modules (its files linked from this checkout), a plugin package, plugin files.
const project = mkdtempSync(join(tmpdir(), 'coord-user-project-'));
const write = (path: string, text: string) => {
  mkdirSync(join(project, path, '..'), { recursive: true });
  writeFileSync(join(project, path), text);
};
write('package.json', JSON.stringify({ name: 'my-project', private: true, type: 'module' }));
mkdirSync(join(project, 'node_modules/coordkit'), { recursive: true });
copyFileSync(join(root, 'package.json'), join(project, 'node_modules/coordkit/package.json'));
for (const part of ['dist', 'lua', 'node_modules']) symlinkSync(join(root, part), join(project, 'node_modules/coordkit', part));

const contract = (name: string) =>
  `defineContract({ plugin: '${name}', keys: { greeting: { pattern: 'greeting', type: 'string', description: 'what the greeter said', ttl: 'none', writers: ['greeter'], value: { type: 'string' } } } })`;
write('node_modules/coord-plugin-hello/package.json', JSON.stringify({ name: 'coord-plugin-hello', version: '1.0.0', type: 'module', exports: { '.': { import: './index.js' } } }));
write(
  'node_modules/coord-plugin-hello/index.js',
  `import { defineContract } from 'coordkit';
export default {
  name: 'hello', version: '1.0.0', coord: '^0.1.0', description: 'a plugin from an npm package',
  contract: ${contract('hello')},
  config: { schema: { type: 'object', properties: {} } },
  roles: { greeter: (ctx) => ({ async start() { await ctx.backend.send(['SET', ctx.keys.greeting(), 'hello from a package']); }, async stop() {} }) },
};
`,
);
write('helper.ts', `import type { RoleContext } from 'coordkit';\nexport const greet = (ctx: RoleContext, who: string): Promise<unknown> => ctx.backend.send(['SET', ctx.keys.greeting!(), \`hi \${who}\`]);\n`);
const typed = (name: string, helper: string) => `import { defineContract, type Plugin } from 'coordkit';
import { greet } from '${helper}';
interface Config { who: string }
const plugin: Plugin<Config> = {
  name: '${name}', version: '1.0.0', coord: '^0.1.0', description: 'a plugin written in TypeScript',
  contract: ${contract(name)},
  config: { schema: { type: 'object', properties: { who: { type: 'string', default: 'world' } } } },
  roles: { greeter: (ctx) => ({ async start() { await greet(ctx, ctx.config.who); }, async stop() {} }) },
};
export default plugin;
`;
write('plugin.ts', typed('typed', './helper.ts'));
write('folder/index.ts', typed('folder', '../helper.ts'));
const plain = (name: string) =>
  `export default { name: '${name}', version: '1.0.0', coord: '^0.1.0', description: 'plain JavaScript', contract: { plugin: '${name}', keys: {} }, config: { schema: { type: 'object' } }, roles: { idle: () => ({ async start() {}, async stop() {} }) } };\n`;
write('plain.js', plain('plain-js'));
write('plain.mjs', plain('plain-mjs'));
write('bad.ts', 'const x: number = ;\n');
write('nodefault.mjs', 'export const plugin = {};\n');
mkdirSync(join(project, 'empty'));

type Runtime = 'node' | 'deno';
const env = { ...process.env, REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_DEBUG: '', COORD_LOG_FORMAT: 'json', NO_COLOR: '1' };
const argvOf = (runtime: Runtime, args: string[]) =>
  runtime === 'node' ? [process.execPath, [join(root, 'dist/bundle/coord.js'), ...args]] as const : [join(root, 'node_modules/deno/deno'), ['run', '-A', join(root, 'cli/main.ts'), ...args]] as const;

function cli(runtime: Runtime, ...args: string[]) {
  const [bin, argv] = argvOf(runtime, args);
  const r = spawnSync(bin, argv, { cwd: project, env, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `coord run`, waits for its ready line, stops it with SIGTERM; resolves with its exit code. */
async function runUntilReady(runtime: Runtime, args: string[]): Promise<number | null> {
  const [bin, argv] = argvOf(runtime, ['run', ...args]);
  const child = spawn(bin, argv, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 90 s: ${err}`)), 90_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (/"msg":"ready"/.test(out)) (clearTimeout(timer), resolve());
    });
    void exited.then((code) => (clearTimeout(timer), reject(new Error(`exited ${code}: ${err}`))));
  });
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`coord run exited ${code} after SIGTERM: ${err}`);
  return code;
}

for (const runtime of ['node', 'deno'] as const) {
  t.test(`${runtime}: plugins by path and by package name`, async (t) => {
    for (const [spec, name] of [
      ['./plain.js', 'plain-js'],
      ['./plain.mjs', 'plain-mjs'],
      ['./plugin.ts', 'typed'],
      [join(project, 'plugin.ts'), 'typed'],
      ['./folder', 'folder'],
      ['coord-plugin-hello', 'hello'],
    ]) {
      const r = cli(runtime, 'schema', '--plugin', spec!, '--format', 'json');
      t.equal(r.status, 0, `${spec}: exit 0 ${r.stderr}`);
      t.equal(r.status === 0 && JSON.parse(r.stdout).plugin, name, `${spec} loads as plugin ${name}`);
    }
  });

  t.test(`${runtime}: a TypeScript plugin file and a package plugin run against Redis`, async (t) => {
    const backend = await createBackend({ url: redis.url });
    t.teardown(() => backend.close());
    const prefix = `{load-${runtime}}:`;
    t.equal(await runUntilReady(runtime, ['--plugin', './plugin.ts', '--redis', redis.url, '--prefix', prefix, '--set', 'typed.who=you']), 0);
    t.equal(await backend.send(['GET', `${prefix}greeting`]), 'hi you', 'the .ts plugin\'s role ran, with its config');
    t.equal(await runUntilReady(runtime, ['--plugin', 'coord-plugin-hello', '--redis', redis.url, '--prefix', `${prefix}pkg:`]), 0);
    t.equal(await backend.send(['GET', `${prefix}pkg:greeting`]), 'hello from a package');
  });

  t.test(`${runtime}: a plugin that cannot load is one line, exit 2`, async (t) => {
    const oneLine = (r: ReturnType<typeof cli>, message: string | RegExp) => {
      t.equal(r.status, 2, `exit 2: ${r.stderr}`);
      t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
      t.match(r.stderr, message);
      t.notMatch(r.stderr, /\n\s+at /, 'no stack');
    };
    oneLine(cli(runtime, 'run', '--plugin', './missing.ts'), 'coord: cannot load plugin ./missing.ts: no such file');
    oneLine(cli(runtime, 'run', '--plugin', './bad.ts'), runtime === 'node' ? /^coord: cannot load plugin \.\/bad\.ts: SyntaxError: .*bad\.ts:1:19: Unexpected token\n$/ : /^coord: cannot load plugin \.\/bad\.ts: .*Expression expected/);
    oneLine(cli(runtime, 'run', '--plugin', './nodefault.mjs'), 'coord: cannot load plugin ./nodefault.mjs: the module has no default export (export default plugin)');
    oneLine(cli(runtime, 'run', '--plugin', './empty'), 'coord: cannot load plugin ./empty: the folder has no index.ts, index.js or package.json with exports or main');
    // yaml is one of coord's own dependencies, but not installed in the project: not a plugin of the project.
    oneLine(cli(runtime, 'run', '--plugin', 'yaml'), `coord: unknown plugin "yaml" (built in: browser-grid, webdriver, load-test, obniz; no npm package of that name is installed in ${project}; or give a module path such as ./my-plugin.js)`);
  });
}
