// The Chromium process a CDP client gets: headless, with a DevTools port and a
// profile folder of its own, killed with its helper processes when the client
// leaves, its profile removed. A process left running when the worker must exit
// at once is killed by the exit hook.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GridError } from '../errors.ts';
import { chromiumFlags } from '../worker/browser.ts';
import { killedOnExit, killTree } from './process-tree.ts';

const LAUNCH_TIMEOUT_MS = 30_000;
/** How long after removing a profile it is looked for again (a dying helper may have written into it). */
const RECHECK_MS = 300;

export interface CdpBrowser {
  process: ChildProcess;
  /** 'host:port' of its DevTools server. */
  address: string;
  /** '/devtools/browser/<id>'. */
  path: string;
  profile: string;
}

/** Every CDP browser this process started and has not yet seen exit (killed with the worker: killedOnExit). */
export const runningCdpBrowsers = killedOnExit();

/** Launches one headless Chromium with a DevTools port, in a fresh profile (added to `profiles`, its owner's list). */
export function launchCdpBrowser(executablePath: string, extraArgs: readonly string[], profiles: Set<string>): Promise<CdpBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'coord-cdp-'));
  profiles.add(profile);
  const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const child = spawn(executablePath, [
    '--headless=new', '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0', '--remote-allow-origins=*',
    `--user-data-dir=${profile}`, ...chromiumFlags, ...(runningAsRoot ? ['--no-sandbox'] : []), ...extraArgs, 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  runningCdpBrowsers.set(child, profile);
  child.once('exit', () => runningCdpBrowsers.delete(child));
  child.once('error', () => runningCdpBrowsers.delete(child)); // a spawn that failed (no such file) has no exit to wait for
  return new Promise((resolve, reject) => {
    let text = '';
    const fail = (why: string) => {
      if (child.pid) killTree(child.pid);
      void removeProfile(profile, profiles);
      reject(new GridError(`cannot launch Chromium for a CDP session (${executablePath}): ${why}`, { code: 'COORD_ERR_BROWSER_GRID_CDP_LAUNCH' }));
    };
    const timer = setTimeout(() => fail(`no DevTools address within ${LAUNCH_TIMEOUT_MS} ms`), LAUNCH_TIMEOUT_MS);
    const onError = (error: Error) => (clearTimeout(timer), fail(error.message));
    const onExit = (code: number | null) => (clearTimeout(timer), fail(`exited with ${code}: ${text.trim().split('\n').at(-1)}`));
    child.once('error', onError);
    child.once('exit', onExit);
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const m = /DevTools listening on ws:\/\/([^/\s]+)(\/devtools\/browser\/[\w-]+)/.exec(text);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit); // only the launch's own: the `runningCdpBrowsers` entry still goes when it exits
      child.off('error', onError);
      child.stderr!.removeAllListeners('data');
      child.stderr!.resume();
      resolve({ process: child, address: m[1]!, path: m[2]!, profile });
    });
  });
}

/**
 * Chromium's helper processes may still write into the profile for a moment after the
 * browser process exits (rmdir then fails with ENOTEMPTY), so removal retries, and a
 * profile that cannot be removed is left in the temp folder rather than failing the worker.
 */
export async function removeProfile(profile: string, profiles: Set<string>): Promise<void> {
  // A browser that exited on its own (the client closed it) leaves helpers that may still
  // write for a moment, recreating the folder: it is looked at again after a pause.
  for (let pass = 0; pass < 3; pass++) {
    await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, RECHECK_MS));
    if (!existsSync(profile)) return void profiles.delete(profile);
  }
}

/** Kills the browser and removes its profile; resolves when both are done. */
export async function disposeCdpBrowser(spare: CdpBrowser, profiles: Set<string>): Promise<void> {
  if (spare.process.exitCode === null && spare.process.signalCode === null) {
    const exited = new Promise((resolve) => spare.process.once('exit', resolve));
    // the helpers with it, or one (the network service) may write into the profile after its removal
    killTree(spare.process.pid!);
    await exited;
  }
  await removeProfile(spare.profile, profiles);
}
