// The README's main line, `npm run build && npx coord run --plugin browser-grid`,
// run twice in a row on the same clone: the second build recreates dist/ and
// must leave dist/bundle/coord.js executable again, or npx's link to the bin fails
// with "coord: Permission denied" (exit 127). The clone is a copy of this one
// (its node_modules linked): a build here would take dist/ away from the test
// files running beside this one.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import t from 'tap';
import { root, spawnGroup } from './support/cli.ts';
import { freePort } from './support/redis.ts';
import { until } from './support/until.ts';

t.setTimeout(600_000); // two full builds on a loaded machine
// Without the runner's TAP_* / NODE_OPTIONS settings: the commands run as they would in a terminal.
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(k))), npm_config_update_notifier: 'false' };

const clone = mkdtempSync(join(tmpdir(), 'coord-main-line-'));
t.teardown(() => rmSync(clone, { recursive: true, force: true }));
cpSync(root, clone, { recursive: true, filter: (src) => !/^(node_modules|dist|\.git)(\/|$)/.test(relative(root, src)) });
symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'));

for (const round of [1, 2]) {
  t.test(`round ${round}: npm run build, then npx coord run --plugin browser-grid starts the grid`, async (t) => {
    const build = spawnSync('npm', ['run', 'build'], { cwd: clone, env, encoding: 'utf8', timeout: 400_000 });
    t.equal(build.status, 0, 'npm run build', { output: `${build.stdout}${build.stderr}`.slice(-3000) });
    t.equal(statSync(join(clone, 'dist/bundle/coord.js')).mode & 0o111, 0o111, 'dist/bundle/coord.js is executable');
    const port = await freePort();
    const grid = spawnGroup(t, 'npx', ['coord', 'run', '--plugin', 'browser-grid', '--set', `browser-grid.port=${port}`, '--log-format', 'json'], { cwd: clone, env });
    await until('the grid ready', () => /"msg":"ready"/.test(grid.out()), 120_000);
    t.match(grid.out(), `proxy listening on ws://127.0.0.1:${port}/?browser=chromium`, 'the proxy prints its ws URL');
    t.notMatch(grid.err(), /Permission denied/);
    grid.signal('SIGINT');
    await grid.exited; // npx ends as a terminal's Ctrl-C ends it; coord's own stop is in its log
    await until('the proxy stopped on SIGINT', () => /"role":"proxy","reason":"SIGINT","msg":"role stopped"/.test(grid.out()), 60_000);
    t.pass('Ctrl-C stops the grid');
  });
}
