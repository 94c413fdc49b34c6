// Starting a node as its own process (orchestrator.nodeMode = process): the
// same coord CLI, `run --plugin webdriver --role node`, with this process's
// effective config written to its stdin (--config=-), so the node
// sees the same Redis, prefix, timeouts and binaries, and no file — with the
// Redis password in it — is left behind by a crash. Each node gets its own process group: it
// outlives an orchestrator crash (its session goes on), and when the node
// itself dies its chromedriver and Chromium are killed with the group.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findUp } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';

/** The CLI entry this code ships with: the built bin (dist/bundle/coord.js) above the compiled plugin, else the sources' cli/main.ts. */
function cliEntry(): string {
  try {
    const js = findUp(import.meta.url, 'bundle/coord.js');
    if (existsSync(js)) return js;
  } catch {
    // running from the sources
  }
  return findUp(import.meta.url, 'cli/main.ts');
}

export interface NodeProcess {
  child: ChildProcess;
  exited: Promise<string>;
}

export function spawnNodeProcess(ctx: Ctx, sessionId: string, orchestratorId: string): NodeProcess {
  const config = {
    redis: ctx.global.redis,
    log: { ...ctx.global.log, format: 'json' },
    plugins: { webdriver: { ...ctx.config, node: { sessionId, orchestratorId } } },
  };
  const child = spawn(process.execPath, [...process.execArgv, cliEntry(), 'run', '--plugin', 'webdriver', '--role', 'node', '--config=-'], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { ...process.env },
    detached: true,
  });
  child.stdin!.on('error', () => {}); // a node that failed at once: its exit says why
  child.stdin!.end(JSON.stringify(config));
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`node process could not start: ${error.message}`));
    child.once('exit', (code, signal) => {
      killGroup(child.pid);
      resolve(`node process exited (${signal ?? `code ${code}`})${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`);
    });
  });
  return { child, exited };
}

/** Whatever the node left running (chromedriver, Chromium) goes with it. */
function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already empty
  }
}
