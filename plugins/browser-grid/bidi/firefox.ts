// The Firefox process a WebDriver BiDi client gets: headless, with a BiDi
// port and a folder of its own (the profile, and a HOME for the caches Firefox
// writes there), killed with its child processes when the client leaves, its
// folder removed. A process left running when the worker must exit at once is
// killed by the exit hook; when the worker is killed, by the watchdog.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killedOnExit, killTree } from '../cdp/process-tree.ts';
import { GridError } from '../errors.ts';
import { unwatchFirefox, watchFirefox } from './watchdog.ts';

const LAUNCH_TIMEOUT_MS = 30_000;

export interface Firefox {
  process: ChildProcess;
  /** 'host:port' of its WebDriver BiDi server (its WebSocket path is /session). */
  address: string;
  /** Its profile and HOME, removed with it. */
  folder: string;
}

/** Every Firefox this process started and has not yet seen exit (killed with the worker: killedOnExit). */
export const runningFirefoxes = killedOnExit();

/** Launches one headless Firefox with a WebDriver BiDi port, in a fresh folder (added to `folders`, its owner's list). */
export function launchFirefox(executablePath: string, folders: Set<string>): Promise<Firefox> {
  const folder = mkdtempSync(join(tmpdir(), 'coord-bidi-'));
  folders.add(folder);
  const home = join(folder, 'home');
  mkdirSync(join(folder, 'profile'));
  mkdirSync(home);
  // Firefox keeps caches under $HOME (~/.cache/mozilla, ~/.config/mozilla): a HOME of its own keeps the user's clean
  const env = { ...process.env, HOME: home, XDG_CACHE_HOME: join(home, '.cache'), XDG_CONFIG_HOME: join(home, '.config'), MOZ_CRASHREPORTER_DISABLE: '1' };
  const child = spawn(executablePath, ['--headless', '--no-remote', '--remote-debugging-port=0', '--profile', join(folder, 'profile')], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true, // a process group of its own, which the watchdog kills whole
  });
  runningFirefoxes.set(child, folder);
  if (child.pid) watchFirefox(child.pid, folder);
  child.once('exit', () => {
    runningFirefoxes.delete(child);
    unwatchFirefox(child.pid!);
  });
  child.once('error', () => runningFirefoxes.delete(child)); // a spawn that failed (no such file) has no exit to wait for
  return new Promise((resolve, reject) => {
    let text = '';
    const fail = (why: string) => {
      if (child.pid) killTree(child.pid);
      void removeFolder(folder, folders);
      reject(new GridError(`cannot launch Firefox for a WebDriver BiDi session (${executablePath}): ${why}`, { code: 'COORD_ERR_BROWSER_GRID_BIDI_LAUNCH' }));
    };
    const timer = setTimeout(() => fail(`no WebDriver BiDi address within ${LAUNCH_TIMEOUT_MS} ms`), LAUNCH_TIMEOUT_MS);
    const onError = (error: Error) => (clearTimeout(timer), fail(error.message));
    const onExit = (code: number | null) => (clearTimeout(timer), fail(`exited with ${code}: ${text.trim().split('\n').at(-1)}`));
    child.once('error', onError);
    child.once('exit', onExit);
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const m = /WebDriver BiDi listening on ws:\/\/([^/\s]+)/.exec(text);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit); // only the launch's own: the `runningFirefoxes` entry still goes when it exits
      child.off('error', onError);
      child.stderr!.removeAllListeners('data');
      child.stderr!.resume();
      resolve({ process: child, address: m[1]!, folder });
    });
  });
}

async function removeFolder(folder: string, folders: Set<string>): Promise<void> {
  await rm(folder, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch(() => {});
  folders.delete(folder);
}

/** Kills Firefox and its child processes and removes its folder; resolves when both are done. */
export async function disposeFirefox(firefox: Firefox, folders: Set<string>): Promise<void> {
  if (firefox.process.exitCode === null && firefox.process.signalCode === null) {
    const exited = new Promise((resolve) => firefox.process.once('exit', resolve));
    killTree(firefox.process.pid!); // its content processes with it, or they write into the folder after its removal
    await exited;
  }
  await removeFolder(firefox.folder, folders);
}
