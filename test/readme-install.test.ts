// What README's Install and CLI sections promise, each held to the repository:
// the packed tarball's name and the build that makes it (prepack, which a git
// URL install runs too), the Deno line (`npx deno task coord`, which needs no
// Deno on PATH), the Playwright client version the grid serves (the bundled
// playwright-core's major.minor), and that `npx coord run` ends 0 on Ctrl-C
// once npm's shell is one that waits for coord (bash), as it says.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { root, spawnGroup } from './support/cli.ts';
import { until } from './support/until.ts';

t.before(() => buildIfStale());
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
// Without the runner's TAP_* / NODE_OPTIONS settings: the commands run as they would in a terminal.
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(k))), REDIS_URL: '', npm_config_update_notifier: 'false' };

t.test('install: a packed tarball of this version, or a git URL, both built by prepack', async (t) => {
  const tarball = `${pkg.name}-${pkg.version}.tgz`;
  t.match(readme, `npm install ../coord/${tarball}`, `README installs ${tarball}, the name npm pack gives this version`);
  t.match(readme, /npm ci && npm pack/, 'and says how to make it');
  t.match(readme, /npm install git\+/, 'or from a git URL');
  t.match(pkg.scripts.prepack, /^npm run build$/, 'prepack builds: npm pack, and npm installing a git URL, get dist/');
  t.match(readme, /`npm install coordkit` answers E404/, 'it says the registry does not have it yet');
});

t.test('Deno: `npx deno task coord` runs the sources without Deno on PATH', async (t) => {
  t.match(readme, '`npx deno task coord …`');
  const deno = JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8')) as { tasks: Record<string, string> };
  t.match(deno.tasks.coord, /^\.\/node_modules\/deno\/deno run -A cli\/main\.ts$/, 'the task runs the Deno of the dev dependencies');
  const path = (env.PATH ?? '').split(':').filter((dir) => !existsSync(join(dir, 'deno'))).join(':'); // no Deno on PATH
  const r = spawnSync('npx', ['deno', 'task', 'coord', '--version'], { cwd: root, env: { ...env, PATH: path }, encoding: 'utf8', timeout: 300_000 });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^coord ${pkg.version.replace(/\./g, '\\.')} \\(deno \\d+\\.`, 'm'));
});

t.test('the Playwright client version README names is the one the grid serves', async (t) => {
  const installed = (JSON.parse(readFileSync(join(root, 'node_modules/playwright-core/package.json'), 'utf8')) as { version: string }).version;
  const served = installed.split('.').slice(0, 2).join('.');
  t.match(pkg.dependencies['playwright-core'], new RegExp(`^\\^${served.replace('.', '\\.')}\\.`), 'the dependency pins that major.minor');
  t.match(readme, `**Playwright ${served}**`, `README says the grid serves Playwright ${served}`);
});

t.test('npx coord run: Ctrl-C drains and ends 0 when npm runs it with bash, as README says', async (t) => {
  const run = spawnGroup(t, 'npx', ['coord', 'run', '--plugin', './test/fixtures/plugins/echo/index.js', '--log-format', 'json'], {
    cwd: root,
    env: { ...env, npm_config_script_shell: 'bash' },
  });
  let ended: unknown;
  void run.exited.then((code) => (ended = code ?? 'a signal'));
  const output = () => `stdout: ${run.out().slice(-300)}; stderr: ${run.err().slice(-300)}`;
  await until(() => `ready (${output()})`, () => /"msg":"ready"/.test(run.out()) || ended !== undefined, 120_000);
  t.equal(ended, undefined, `npx coord run is running (${output()})`);
  run.signal('SIGINT');
  t.equal(await run.exited, 0, 'exit 0');
  t.match(run.out(), /"reason":"SIGINT","msg":"role stopped"/, 'the roles drained');
  t.match(readme, 'npm_config_script_shell=bash npx coord run');
});
