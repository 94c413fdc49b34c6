// coord as its users get it: the project packed (`npm pack`) and the tarball
// installed into a fresh project (its dependencies from the npm registry).
// There, `npx coord run --plugin browser-grid` serves a Playwright client and
// drains on Ctrl-C; `coord new plugin` makes a folder whose own `npm install &&
// npm test` and typecheck pass against the installed coord; and a load-test
// scenario and a plugin type-check against the installed types.
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { root } from './support/cli.ts';
import { freePort, startRedis } from './support/redis.ts';

t.before(() => buildIfStale());
t.setTimeout(900_000); // a real npm install, twice, and a plugin's own test run: minutes on a loaded machine
const redis = await startRedis();
t.teardown(() => redis.stop());
const work = mkdtempSync(join(tmpdir(), 'coord-tarball-'));
const project = join(work, 'project');
mkdirSync(project);
// Without the runner's TAP_* / NODE_OPTIONS settings: everything runs as it would for a user.
const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(k)));
const env = { ...inherited, REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_DEBUG: '', NO_COLOR: '1', npm_config_update_notifier: 'false' };
const npmFlags = ['--no-audit', '--no-fund', '--prefer-offline'];

function sh(command: string, args: string[], cwd: string, options: SpawnSyncOptions = {}) {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 300_000, ...options });
  return { status: r.status, out: `${String(r.stdout ?? '')}${String(r.stderr ?? '')}`, stdout: String(r.stdout ?? '') };
}

let tarball = '';

t.test('npm pack makes a tarball with the built code, the Lua, the template and the examples', async (t) => {
  const r = sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root); // built above (buildIfStale)
  t.equal(r.status, 0, r.out.slice(-2000));
  const [packed] = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  const paths = packed!.files.map((f) => f.path);
  for (const path of ['dist/cli/main.js', 'dist/entries/coordkit.d.ts', 'plugins/browser-grid/lua', 'templates/plugin/package.json', 'examples/cron/index.ts', 'examples/deploy/one-machine/coord.yaml']) {
    t.ok(paths.some((p) => p.startsWith(path)), `ships ${path}`);
  }
  t.notOk(paths.some((p) => p.startsWith('dist/test/')), 'no test helpers');
});

t.test('installs into a fresh project', async (t) => {
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2));
  // typescript: coord transpiles .ts plugins with it on Node, and tsc checks the user's code below.
  const r = sh('npm', ['install', tarball, 'typescript@5.9', '@types/node@20', ...npmFlags], project);
  t.equal(r.status, 0, r.out.slice(-3000));
  const installed = JSON.parse(readFileSync(join(project, 'node_modules/coordkit/package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
  t.same([installed.name, Object.keys(installed.bin)], ['coordkit', ['coord']], 'the package coordkit, the command coord');
});

t.test('npx coord run --plugin browser-grid serves a Playwright client and drains on Ctrl-C', async (t) => {
  const port = await freePort();
  const child = spawn('npx', ['coord', 'run', '--plugin', 'browser-grid', '--set', `browser-grid.port=${port}`, '--log-format', 'json'], {
    cwd: project,
    env,
    detached: true, // its own process group: Ctrl-C in a terminal signals npx and coord alike
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  t.teardown(() => group('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seen = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} within 120 s: ${err.slice(-500)}`)), 120_000);
      const check = () => pattern.test(out) && (clearTimeout(timer), resolve());
      child.stdout.on('data', (d: Buffer) => ((out += d), check()));
      check();
    });
  await seen(/"msg":"ready"/);
  t.match(out, `proxy listening on ws://127.0.0.1:${port}/?browser=chromium`, 'prints the ws URL');
  const browser = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 60_000 });
  const page = await browser.newPage();
  t.equal(await page.evaluate(() => 6 * 7), 42, 'a page runs in a served browser');
  await browser.close();
  group('SIGINT');
  await exited; // npx ends as a terminal's Ctrl-C ends it; coord's own stop is in its log
  await seen(/"role":"worker","reason":"SIGINT","msg":"role stopped"/);
  t.match(out, /"msg":"draining"/, 'the workers drained');
  t.match(out, /"role":"proxy","reason":"SIGINT","msg":"role stopped"/, 'both roles stopped on the one Ctrl-C');
  t.notMatch(err, /again while stopping/);
});

t.test('coord new plugin: its own npm install, npm test and typecheck pass against the installed coord', async (t) => {
  const made = sh('npx', ['coord', 'new', 'plugin', 'job-queue'], project);
  t.equal(made.status, 0, made.out);
  const plugin = join(project, 'job-queue');
  const pkg = JSON.parse(readFileSync(join(plugin, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  t.equal(pkg.devDependencies.coordkit, 'file:../node_modules/coordkit', 'its dev dependency is the installed coord');
  const install = sh('npm', ['install', ...npmFlags], plugin);
  t.equal(install.status, 0, install.out.slice(-3000));
  t.ok(readdirSync(join(plugin, 'node_modules')).includes('tap'), 'tap installed');
  const test = sh('npm', ['test'], plugin, { env: { ...env, REDIS_URL: redis.url } });
  t.equal(test.status, 0, 'npm test exits 0', { output: test.out.slice(-4000) });
  for (const adapter of ['embedded', 'ioredis', 'node-redis']) t.match(test.stdout, new RegExp(`^\\s*ok \\d+ - contract on ${adapter}`, 'm'), `the contract suite passed on ${adapter}`);
  const typecheck = sh('npm', ['run', 'typecheck'], plugin);
  t.equal(typecheck.status, 0, 'tsc passes', { output: typecheck.out });
});

t.test("a load-test scenario and a plugin type-check against the installed types (and a wrong field does not)", async (t) => {
  const write = (file: string, text: string) => writeFileSync(join(project, file), text);
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: true };
  write('tsconfig.json', JSON.stringify({ compilerOptions, files: ['scenario.ts', 'plugin.ts', 'embed.ts'] }));
  write('tsconfig.bad.json', JSON.stringify({ compilerOptions, files: ['bad-scenario.ts'] }));
  write(
    'scenario.ts',
    `import { defineScenario, type Scenario, type VirtualUser } from 'coordkit/load-test';
interface Params { baseUrl: string; [key: string]: unknown }
export const plain: Scenario<Params> = { params: { baseUrl: 'http://127.0.0.1:1' }, steps: [{ name: 'home', run: (user) => user.http.get('/') }] };
export default defineScenario<Params>({
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'home', every: '1..3s', run: async (user: VirtualUser<Params>) => { await user.http.get(user.params.baseUrl); user.record('custom', 1); } }],
});
`,
  );
  write(
    'plugin.ts',
    `import { defineContract, type ConformanceScenario, type Plugin, type Role, type RoleContext } from 'coordkit';
const contract = defineContract({ plugin: 'greeter', keys: { greeting: { pattern: 'greeting', type: 'string', description: 'the greeting', ttl: 'none', writers: ['greeter'], value: { type: 'string' } } } });
type Keys = typeof contract.keys;
const greeter = (ctx: RoleContext<{ who: string }, Keys>): Role => ({
  async start() { await ctx.backend.send(['SET', ctx.keys.greeting(), \`hi \${ctx.config.who}\`]); },
  async stop() {},
});
const scenarios: ConformanceScenario<{ who: string }, Keys>[] = [{ name: 'greets', expects: ['greeting'], run: async (ctx) => { await greeter(ctx).start(); } }];
const plugin: Plugin<{ who: string }, Keys> = {
  name: 'greeter', version: '1.0.0', coord: '^0.1.0', description: 'says hi', contract,
  config: { schema: { type: 'object', properties: { who: { type: 'string', default: 'world' } } } },
  roles: { greeter }, scenarios,
};
export default plugin;
`,
  );
  write(
    'embed.ts',
    `import { createBackend, loadConfig, startProcess } from 'coordkit/embed';
import plugin from './plugin.js';
const config = loadConfig({ plugins: [plugin] });
const handle = await startProcess({ plugins: [plugin], config, backend: await createBackend({}) });
await handle.stop('done');
`,
  );
  write('bad-scenario.ts', `import { defineScenario } from 'coordkit/load-test';\nexport default defineScenario({ steps: [{ name: 'home', every: true, run: () => 1 }] });\n`);
  const good = sh('npx', ['tsc', '-p', 'tsconfig.json'], project);
  t.equal(good.status, 0, 'tsc passes', { output: good.out });
  const bad = sh('npx', ['tsc', '-p', 'tsconfig.bad.json'], project);
  t.equal(bad.status, 2, 'tsc fails on a wrong field');
  t.match(bad.out, /bad-scenario\.ts\(2,\d+\): error TS2322: Type '(true|boolean)' is not assignable/, 'at the field, by type');
});
