// Runs the built `coord` CLI as real processes (each in its own process group,
// so a kill -9 takes its browsers with it as a container stop would) and
// watches their JSON log lines.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { Test } from 'tap';
import { findUp } from '../../core/paths.ts';

/** The repository root, from the sources or from dist/. */
export const root = dirname(findUp(import.meta.url, 'package.json'));
const main = join(root, 'dist/bundle/coord.js');

export interface LogLine {
  level: number | string;
  msg: string;
  [field: string]: unknown;
}

export interface CoordProcess {
  child: ChildProcess;
  lines: LogLine[];
  /** Standard output as printed (a command's result, where lines need not be log lines). */
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first log line matching, or rejects after timeoutMs. */
  waitFor(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

export type Runtime = 'node' | 'deno';

/** Node runs the compiled CLI; Deno runs the sources (as `deno task coord` does). */
function command(runtime: Runtime, args: string[]): [string, string[]] {
  return runtime === 'node' ? [process.execPath, [main, ...args]] : [join(root, 'node_modules/.bin/deno'), ['run', '-A', join(root, 'cli/main.ts'), ...args]];
}

export function coord(args: string[], env: Record<string, string> = {}, runtime: Runtime = 'node'): CoordProcess {
  const [bin, argv] = command(runtime, args);
  const child = spawn(bin, argv, {
    cwd: root,
    detached: true,
    env: { ...process.env, COORD_LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let err = '';
  let out = '';
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    buffered += chunk.toString();
    let at;
    while ((at = buffered.indexOf('\n')) !== -1) {
      const text = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { level: 'text', msg: text };
      }
      lines.push(line);
      for (const w of [...waiters]) if (w.match(line)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(line));
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(match, timeoutMs = 60_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${err.slice(-500)}`)), timeoutMs);
        waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then((code) => reject(new Error(`coord exited with ${code} before the expected log line; stderr: ${err.slice(-500)}`)));
      });
    },
    kill(signal = 'SIGTERM') {
      try {
        process.kill(signal === 'SIGKILL' ? -child.pid! : child.pid!, signal);
      } catch {
        // already gone
      }
    },
  };
}

/** Runs the CLI to completion: exit code and output. */
export function coordSync(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [main, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Asserts the documented error shape: exit `code`, nothing on stdout, exactly one line on stderr matching `message`, no stack trace. */
export function oneLineError(t: Test, r: { status: number | null; stdout: string; stderr: string }, code: number, message: string | RegExp): void {
  t.equal(r.status, code, `exit ${code}`);
  t.equal(r.stdout, '', 'nothing on stdout');
  const lines = r.stderr.split('\n').filter(Boolean);
  t.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
  t.match(lines[0], message);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

export interface GroupProcess {
  /** Standard output and error so far. */
  out(): string;
  err(): string;
  exited: Promise<number | null>;
  /** Signals the whole group, as a terminal's Ctrl-C does (npx and coord alike); a group already gone is fine. */
  signal(signal: NodeJS.Signals): void;
}

/** `command args…` in its own process group, its output collected; the group is killed -9 at teardown. */
export function spawnGroup(t: { teardown(fn: () => unknown): void }, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): GroupProcess {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      // already gone
    }
  };
  t.teardown(() => signal('SIGKILL'));
  return { out: () => out, err: () => err, exited: new Promise((resolve) => child.once('exit', resolve)), signal };
}
