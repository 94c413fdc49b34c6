// coord as a stranger gets it, following the README and docs/plugins.md
// literally: the project packed (`npm pack`) and the tarball installed into a
// fresh project (`npm init -y && npm i ./coordkit-*.tgz`, its dependencies from
// the npm registry, nothing else). There, with no TypeScript installed, then
// with TypeScript 7, then with TypeScript 5: `coord conformance` passes,
// `coord new plugin demo` makes a plugin that `coord conformance --plugin
// ./demo` and `coord run --plugin ./demo` take as made, and a .ts load-test
// scenario runs. Also: `npx coord run --plugin browser-grid` serves a
// Playwright client; the made plugin's own `npm install && npm test` passes;
// and a consumer file type-checks against the published types with
// skipLibCheck: false (they need nothing outside coord's own dependencies).
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import t, { type Test } from 'tap';
import { buildIfStale } from './support/build.ts';
import { root, spawnGroup } from './support/cli.ts';
import { startTarget } from './support/load.ts';
import { freePort, startRedis } from './support/redis.ts';
import { until } from './support/until.ts';

t.before(() => buildIfStale());
t.setTimeout(1_500_000); // real npm installs and three walkthroughs: minutes on a loaded machine
const redis = await startRedis();
t.teardown(() => redis.stop());
const target = await startTarget({ own: true }); // its own process: this one waits in spawnSync while coord runs
t.teardown(() => target.close());
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

/** `npx coord ARGS…` in its own process group until `ready` is logged, then Ctrl-C (SIGINT to the group); resolves to the log. */
async function runUntilReady(t: Test, args: string[]): Promise<string> {
  const coord = spawnGroup(t, 'npx', ['coord', ...args, '--log-format', 'json'], { cwd: project, env });
  let code: number | null | undefined;
  void coord.exited.then((c) => (code = c));
  await until(() => `npx coord ${args.join(' ')} ready (stderr: ${coord.err().slice(-300)})`, () => /"msg":"ready"/.test(coord.out()) || code !== undefined, 120_000);
  t.match(coord.out(), /"msg":"ready"/, `npx coord ${args.join(' ')}: ready`, { stderr: coord.err().slice(-1000) });
  coord.signal('SIGINT');
  await coord.exited; // npx ends as a terminal's Ctrl-C ends it; coord's own stop is in its log
  await until('the roles stopped on SIGINT', () => /"reason":"SIGINT","msg":"role stopped"/.test(coord.out()), 60_000).catch(() => undefined);
  const out = coord.out();
  t.match(out, /"reason":"SIGINT","msg":"role stopped"/, 'Ctrl-C stops it');
  return out;
}

let tarball = '';

t.test('npm pack makes a tarball with the built code, the Lua, the template and the examples', async (t) => {
  const r = sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root); // built above (buildIfStale)
  t.equal(r.status, 0, r.out.slice(-2000));
  const [packed] = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  const paths = packed!.files.map((f) => f.path);
  for (const path of ['dist/bundle/coord.js', 'dist/entries/coordkit.d.ts', 'plugins/browser-grid/lua', 'templates/plugin/package.json', 'examples/cron/index.ts', 'examples/deploy/one-machine/coord.yaml']) {
    t.ok(paths.some((p) => p.startsWith(path)), `ships ${path}`);
  }
  t.notOk(paths.some((p) => p.startsWith('dist/test/')), 'no test helpers');
  // the code runs from dist/bundle/ (scripts/bundle.ts); tsc's modules ship only as types
  t.same(paths.filter((p) => /^dist\/(?!bundle\/).*\.js(\.map)?$/.test(p)), [], 'no unbundled copy of the code');
});

t.test('installs into a fresh project: npm init -y, npm i ./coordkit-*.tgz, nothing else', async (t) => {
  t.equal(sh('npm', ['init', '-y'], project).status, 0, 'npm init -y');
  // npm 11 writes "type": "commonjs": the demo plugin below type-checks there because its folder says "type": "module".
  t.not(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).type, 'module', 'a CommonJS project, as npm init makes it');
  const r = sh('npm', ['install', tarball, ...npmFlags], project);
  t.equal(r.status, 0, r.out.slice(-3000));
  const installed = JSON.parse(readFileSync(join(project, 'node_modules/coordkit/package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
  t.same([installed.name, Object.keys(installed.bin)], ['coordkit', ['coord']], 'the package coordkit, the command coord');
  for (const absent of ['typescript', 'tap']) t.notOk(existsSync(join(project, 'node_modules', absent)), `no ${absent} installed`);
});

writeFileSync(
  join(project, 's.ts'),
  `import { defineScenario } from 'coordkit/load-test';
interface Params { baseUrl: string; [key: string]: unknown }
export default defineScenario<Params>({
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'home', run: async (user) => { await user.http.get('/ping', { metric: 'GET /ping' }); } }],
});
`,
);

/** What docs/plugins.md walks a newcomer through, as it says it. */
function walkthrough(typescript: string) {
  t.test(`${typescript}: coord conformance, coord new plugin demo, its conformance and run, a .ts scenario`, async (t) => {
    const conformance = sh('npx', ['coord', 'conformance', '--adapter', 'embedded'], project);
    t.equal(conformance.status, 0, 'coord conformance --adapter embedded passes', { output: conformance.out.slice(-3000) });
    t.match(conformance.stdout, /^adapter embedded\s+scripts\s+\d+\s+0\s+0$/m, 'the adapter suite ran');
    t.match(conformance.stdout, /\d+ sections, 0 failed\n$/);

    if (!existsSync(join(project, 'demo'))) {
      const made = sh('npx', ['coord', 'new', 'plugin', 'demo'], project);
      t.equal(made.status, 0, made.out);
      t.match(made.stdout, 'coord run --plugin ./demo');
    }
    const own = sh('npx', ['coord', 'conformance', '--plugin', './demo', '--adapter', 'embedded'], project);
    t.equal(own.status, 0, 'coord conformance --plugin ./demo passes', { output: own.out.slice(-3000) });
    t.match(own.stdout, /^contract demo on embedded\s/m, "the demo plugin's contract ran");
    await runUntilReady(t, ['run', '--plugin', './demo']);

    const before = (await target.stats()).total;
    const load = sh('npx', ['coord', 'load', 'run', '--scenario', 's.ts', '--users', '2', '--duration', '2s', '--param', `baseUrl=${target.url}`, '--out', 'json'], project);
    t.equal(load.status, 0, 'coord load run --scenario s.ts', { output: load.out.slice(-3000) });
    const served = (await target.stats()).total - before;
    t.ok(served > 0, `the scenario sent requests (${served})`);
    t.equal((JSON.parse(load.stdout) as { total: { count: number } }).total.count, served, 'and counted each');
  });
}

walkthrough('no TypeScript installed');

t.test('npm i -D typescript@7', async (t) => {
  const r = sh('npm', ['install', '--save-dev', 'typescript@7', ...npmFlags], project);
  t.equal(r.status, 0, r.out.slice(-3000));
  t.match(JSON.parse(readFileSync(join(project, 'node_modules/typescript/package.json'), 'utf8')).version, /^7\./);
});
walkthrough('with TypeScript 7');

t.test('npm i -D typescript@5', async (t) => {
  const r = sh('npm', ['install', '--save-dev', 'typescript@5', ...npmFlags], project);
  t.equal(r.status, 0, r.out.slice(-3000));
  t.match(JSON.parse(readFileSync(join(project, 'node_modules/typescript/package.json'), 'utf8')).version, /^5\./);
});
walkthrough('with TypeScript 5');

t.test('npx coord run --plugin browser-grid serves a Playwright client and drains on Ctrl-C', async (t) => {
  const port = await freePort();
  const grid = spawnGroup(t, 'npx', ['coord', 'run', '--plugin', 'browser-grid', '--set', `browser-grid.port=${port}`, '--log-format', 'json'], { cwd: project, env });
  const seen = (pattern: RegExp) => until(() => `${pattern} (stderr: ${grid.err().slice(-500)})`, () => pattern.test(grid.out()), 120_000);
  await seen(/"msg":"ready"/);
  t.match(grid.out(), `proxy listening on ws://127.0.0.1:${port}/?browser=chromium`, 'prints the ws URL');
  const browser = await chromium.connect(`ws://127.0.0.1:${port}/?browser=chromium`, { timeout: 60_000 });
  const page = await browser.newPage();
  t.equal(await page.evaluate(() => 6 * 7), 42, 'a page runs in a served browser');
  await browser.close();
  grid.signal('SIGINT');
  await grid.exited; // npx ends as a terminal's Ctrl-C ends it; coord's own stop is in its log
  await seen(/"role":"worker","reason":"SIGINT","msg":"role stopped"/);
  t.match(grid.out(), /"msg":"draining"/, 'the workers drained');
  t.match(grid.out(), /"role":"proxy","reason":"SIGINT","msg":"role stopped"/, 'both roles stopped on the one Ctrl-C');
  t.notMatch(grid.err(), /again while stopping/);
});

t.test('the demo plugin: its own npm install, npm test and typecheck pass against the installed coord', async (t) => {
  const plugin = join(project, 'demo'); // made by the walkthroughs above
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

t.test("with typescript@5, a scenario, a plugin and an embedding type-check against the installed types with skipLibCheck: false (and a wrong field does not)", async (t) => {
  const write = (file: string, text: string) => writeFileSync(join(project, file), text);
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: false };
  write('tsconfig.json', JSON.stringify({ compilerOptions, files: ['scenario.mts', 'plugin.mts', 'embed.mts'] }));
  write('tsconfig.bad.json', JSON.stringify({ compilerOptions, files: ['bad-scenario.mts'] }));
  write(
    'scenario.mts',
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
    'plugin.mts',
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
    'embed.mts',
    `import { createBackend, loadConfig, startProcess } from 'coordkit';
import { connectBackend, coordVersion } from 'coordkit/embed';
import { CoordError } from 'coordkit';
import { adapterSuite, type SuiteTest } from 'coordkit/conformance';
import plugin from './plugin.mjs';
const config = loadConfig({ plugins: [plugin] });
const handle = await startProcess({ plugins: [plugin], config, backend: await createBackend({}) });
await handle.stop('done');
const same: string = coordVersion;
void connectBackend;
void same;
const caught: unknown = new Error('x');
if (caught instanceof CoordError && caught.code === 'COORD_ERR_CONFIG') console.log(caught.message);
export const suite = (t: SuiteTest) => adapterSuite(t, { name: 'embedded', make: () => createBackend({}) });
`,
  );
  write('bad-scenario.mts', `import { defineScenario } from 'coordkit/load-test';\nexport default defineScenario({ steps: [{ name: 'home', every: true, run: () => 1 }] });\n`);
  const good = sh('npx', ['tsc', '-p', 'tsconfig.json'], project);
  t.equal(good.status, 0, 'tsc passes', { output: good.out });
  const bad = sh('npx', ['tsc', '-p', 'tsconfig.bad.json'], project);
  t.equal(bad.status, 2, 'tsc fails on a wrong field');
  t.match(bad.out, /bad-scenario\.mts\(2,\d+\): error TS2322: Type '(true|boolean)' is not assignable/, 'at the field, by type');
});
