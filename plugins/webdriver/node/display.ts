// An X display for a browser that needs one (WebKitGTK's MiniBrowser has no
// headless mode), as Selenium's images run Xvfb: a user starts the grid with
// no DISPLAY set. Each driver gets an Xvfb of its own; Xvfb picks a free
// display number itself (-displayfd), so nodes starting together never race
// for one.
import { spawn } from 'node:child_process';
import { WebDriverError } from '../errors.ts';

/** The screen each display has: MiniBrowser's window is 1024×768 at 0,0, with room to spare. */
export const SCREEN = '1280x800x24';

/** How long Xvfb may take to say which display it took. */
const XVFB_START_MS = 10_000;

/**
 * A shell script that starts Xvfb, waits until it has a display, and runs
 * "$@" (the driver) on it. Xvfb stays in the driver's process group, so
 * whatever stops the driver's group stops its display too.
 */
export function onOwnDisplay(xvfb: string): string[] {
  const script = [
    'f=$(mktemp)',
    `${quote(xvfb)} -displayfd 3 -screen 0 ${SCREEN} -nolisten tcp 3>"$f" 2>/dev/null &`,
    'n=0',
    'while [ ! -s "$f" ]; do',
    `  n=$((n + 1)); if [ "$n" -gt ${XVFB_START_MS / 50} ]; then echo "Xvfb (${xvfb}) gave no display within ${XVFB_START_MS / 1000} s" >&2; rm -f "$f"; exit 1; fi`,
    '  sleep 0.05',
    'done',
    'DISPLAY=":$(tr -d "\\n" <"$f")"; export DISPLAY; rm -f "$f"',
    'exec "$@"',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'coord-display'];
}

/** Runs `binary args` on a display of its own and resolves with what it printed (its --version needs one). */
export function outputOnDisplay(xvfb: string, binary: string, args: string[], timeoutMs = 15_000): Promise<string> {
  const [sh, ...rest] = onOwnDisplay(xvfb);
  return new Promise((resolve, reject) => {
    // detached: its own process group, so the timeout stops Xvfb too
    const child = spawn(sh!, [...rest, binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    const timer = setTimeout(() => stopGroup(child.pid), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new WebDriverError(`cannot run ${binary}: ${error.message}`, { code: 'COORD_ERR_WEBDRIVER_BROWSER_VERSION' }));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      stopGroup(child.pid); // Xvfb, left in the group when the browser exited
      resolve(output);
    });
  });
}

function stopGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

function quote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}
