// killTree takes a browser's helpers with it: every process under the pid,
// grandchildren included, is found in /proc and killed in one pass.
import { spawn } from 'node:child_process';
import t from 'tap';
import { descendants, isRunning as alive, killTree } from '../plugins/browser-grid/cdp/process-tree.ts';
import { until } from './support/until.ts';

t.test('descendants finds children and grandchildren; killTree leaves none of them', async (t) => {
  // sh → (sh → sleep), sleep: two levels, as Chromium → zygote → renderer
  const root = spawn('sh', ['-c', '(sleep 60 & wait) & sleep 60 & wait'], { stdio: 'ignore' });
  t.teardown(() => root.kill('SIGKILL'));
  const found = await until('three processes under the shell', () => {
    const pids = descendants(root.pid!);
    return pids.length >= 3 ? pids : undefined;
  }, 10_000);
  t.equal(found.length, 3, 'a subshell and its sleep, and a sleep');
  t.notOk(found.includes(root.pid!), 'not the root itself');
  const exited = new Promise((resolve) => root.once('exit', resolve));
  killTree(root.pid!);
  await exited;
  await until('every descendant gone', () => found.every((pid) => !alive(pid)), 10_000);
  t.pass('the root and all three are gone');
  t.same(descendants(process.pid).filter((pid) => found.includes(pid)), [], 'none left under this process either');
});

t.test('a pid with no children has none, nor has one that is gone', async (t) => {
  const lone = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => lone.kill('SIGKILL'));
  t.same(descendants(lone.pid!), []);
  const exited = new Promise((resolve) => lone.once('exit', resolve));
  killTree(lone.pid!);
  await exited;
  t.same(descendants(lone.pid!), [], 'gone: none, and no error');
});
