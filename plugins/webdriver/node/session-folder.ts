// A session's own folder on its node, for what Selenium Grid's extensions put
// on the node's disk: files a client uploads (se/file) and files the browser
// downloads (se/files). One folder per session under the system's temporary
// directory, named after the process that owns it, so a node removes its
// session's folder when the session ends, and an orchestrator starting on the
// machine removes the folders of processes that died without doing so —
// never those of another grid's live processes.
import { mkdirSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where every session folder of this machine lives. */
export function foldersRoot(): string {
  return join(tmpdir(), 'coord-webdriver-sessions');
}

export class SessionFolder {
  /** The folder: <root>/<pid>-<session id>. */
  readonly path: string;
  /** Only a session that used its folder has one to remove: the others end without touching the disk. */
  private used = false;

  constructor(sessionId: string) {
    this.path = join(foldersRoot(), `${process.pid}-${sessionId}`);
  }

  /** A subfolder (created if missing). */
  sub(name: 'uploads' | 'downloads'): string {
    const dir = join(this.path, name);
    this.used = true;
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Removes the folder; never throws (Chromium's helpers may still be writing into it). */
  async remove(): Promise<void> {
    if (this.used) await removeQuietly(this.path);
  }
}

/** Removes the session folders whose owning process is gone; the number removed. */
export async function removeLeftoverFolders(): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(foldersRoot());
  } catch {
    return 0; // no folder yet
  }
  const dead = names.filter((name) => {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    return pid > 0 && pid !== process.pid && !running(pid);
  });
  await Promise.all(dead.map((name) => removeQuietly(join(foldersRoot(), name))));
  return dead.length;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

async function removeQuietly(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).catch(() => {});
}
