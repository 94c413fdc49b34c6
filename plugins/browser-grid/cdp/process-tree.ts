// The processes a browser started (zygotes, renderers, the network service…),
// read from the kernel (/proc). Killing only the browser's main process leaves
// its helpers to notice and exit on their own, and meanwhile one may still
// write into the profile (the network service flushes the disk cache index),
// recreating a folder that was just removed; killing the whole tree at once
// leaves nothing to write.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';

/** Every living descendant of `pid` (children, grandchildren, …); none where /proc is missing (not Linux). */
export function descendants(pid: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // it exited meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(name));
    else children.set(ppid, [Number(name)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length; ) {
    for (const child of children.get(queue.pop()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** SIGKILLs `pid` and every process under it, in one pass. */
export function killTree(pid: number): void {
  for (const target of [pid, ...descendants(pid)]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {} // already gone
  }
}

/** Is `pid` a living process (ours or someone else's)? */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/**
 * A list of browsers started for clients and not yet seen to exit, each with
 * its folder (profile, HOME). A worker that must exit at once (a second
 * Ctrl-C) cannot wait for them, so on exit every such list's browsers are
 * killed, tree and all, and their folders removed synchronously; otherwise
 * they would outlive it.
 */
export function killedOnExit(): Map<ChildProcess, string> {
  const running = new Map<ChildProcess, string>();
  process.once('exit', () => {
    for (const [child, folder] of running) {
      if (child.pid) killTree(child.pid);
      try {
        rmSync(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      } catch {} // a helper process still writing: the temp folder keeps it
    }
  });
  return running;
}
