// A process whose state lives in the embedded backend cannot be read by another
// process: `coord grid status` without --redis can only say where to ask it.
// To name the port it really listens on (port 0, a config file the command
// was not given), such a process writes its addresses to a per-user run
// folder, and removes the file as it exits. A file whose process is gone (a
// kill -9) is ignored and removed by the next reader.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { parseRedisUrl } from './url.ts';
import type { GlobalConfig } from './plugin.ts';

/** One address a process of `plugin` listens on. */
export interface Listener {
  pid: number;
  plugin: string;
  /** What listens there, e.g. 'proxy'. */
  what: string;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
}

function runDir(): string {
  return join(process.env.XDG_RUNTIME_DIR || tmpdir(), `coord-${userInfo().uid}`);
}

const announced: Listener[] = [];
const written = new Set<string>();

/**
 * Records that this process's `what` of `plugin` listens on `url`, when its
 * state is in the embedded backend (with a Redis, status commands read Redis).
 * A host of 0.0.0.0 or :: is named as loopback, where a local command reaches it.
 * A status command in another process finds it there; the record goes when the
 * process exits.
 *
 * @example
 * server.listen(ctx.config.port, ctx.config.host, () => {
 *   const { port } = server.address() as AddressInfo;
 *   announceListener(ctx.global, 'cron', 'api', 'http', ctx.config.host, port);
 * });
 */
export function announceListener(global: Readonly<GlobalConfig>, plugin: string, what: string, scheme: string, host: string, port: number): void {
  if (parseRedisUrl(global.redis.url).kind !== 'embedded') return;
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  announced.push({ pid: process.pid, plugin, what, url: `${scheme}://${reachable}:${port}` });
  const file = join(runDir(), `${plugin}-${process.pid}.json`);
  try {
    mkdirSync(runDir(), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify(announced.filter((l) => l.plugin === plugin)));
    if (!written.size) process.once('exit', () => written.forEach((f) => rmSync(f, { force: true })));
    written.add(file);
  } catch {
    // A read-only or full disk only costs the hint: the process runs on.
  }
}

/** The addresses live processes of `plugin` announced on this machine, for this user. */
export function liveListeners(plugin: string): Listener[] {
  let names: string[];
  try {
    names = readdirSync(runDir()).filter((name) => name.startsWith(`${plugin}-`) && name.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const file = join(runDir(), name);
    try {
      const listeners = JSON.parse(readFileSync(file, 'utf8')) as Listener[];
      if (listeners.length && alive(listeners[0]!.pid)) return listeners;
      rmSync(file, { force: true });
    } catch {
      // half-written or removed meanwhile: nothing to name
    }
    return [];
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
