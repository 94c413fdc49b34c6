// One driver process (chromedriver, WebKitWebDriver, geckodriver): started on
// a free loopback port (on an Xvfb display of its own when its browser needs
// one), ready once /status says so, stopped with its browsers. (Its "started on port N" line
// cannot be relied on: piped, its output is buffered.)
//
// chromedriver and the Chromium it starts live in a process group of their
// own, watched by a small sh whose stdin is a pipe from this process. Whatever
// way this process ends — even kill -9, which no handler sees — the pipe
// closes, the watchdog reads end-of-file and kills the whole group; when
// chromedriver ends by itself, the watchdog kills what it left (Chromium)
// too. Stopping a driver is closing that pipe. (Linux's PR_SET_PDEATHSIG
// would do this, but Node cannot set it, and it would not reach Chromium, a
// grandchild.) The group is made with bash's job control, not setsid: a new
// session would put the browser in a scheduling group (autogroup) of its
// own, which on a loaded machine added milliseconds to every command. (dash
// has no job control without a terminal; without bash the driver runs
// unwatched, as a plain child.)
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { DriverError } from '../errors.ts';
import { hop } from '../http/hop.ts';
import { onOwnDisplay } from './display.ts';

export interface Driver {
  readonly port: number;
  readonly pid: number;
  /** Resolves when the process exits (for whatever reason), with a description. */
  readonly exited: Promise<string>;
  /** False once the process has exited. */
  readonly running: boolean;
  stop(): Promise<void>;
}

export interface DriverOptions {
  binary: string;
  /** Longest the driver may take to print its port and answer /status ready. */
  timeoutMs: number;
  logFile?: string;
  signal?: AbortSignal;
  /** The X server to run the driver on a display of its own (its browser needs one): the Xvfb binary. */
  xvfb?: string;
}

/** A port free on loopback right now (the driver binds it next; a lost race is retried). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The watchdog (bash -c, "$@" = the driver and its arguments). With job
 * control on (set -m) each background job gets a process group of its own:
 * the driver's (Chromium joins it), and the watcher's. The watcher reads the
 * pipe (kept on fd 3: a background job's stdin is /dev/null) and kills the
 * driver's group at end-of-file; the driver exiting ends the watcher and
 * what the driver left. Nothing is written once the grid process is gone:
 * its pipes are closed, and a write would end the shell first.
 */
const BASH = '/bin/bash';
const watched = existsSync(BASH);
const WATCHDOG_SAYS = 'chromedriver-watchdog: ';
const WATCHDOG = [
  'set -m',
  'exec 3<&0',
  '"$@" </dev/null &',
  'driver=$!',
  'exec 4>&2 2>/dev/null', // job control's own notices ("[1]+ Done …") are not the driver's output
  '(while read -r _ <&3; do :; done; kill -KILL -"$driver") &',
  'watcher=$!',
  'wait "$driver"',
  'code=$?',
  'kill -KILL -"$driver" -"$watcher" 2>/dev/null',
  `echo "${WATCHDOG_SAYS}exited (code $code)" >&4`,
].join('\n');

export async function startDriver(options: DriverOptions): Promise<Driver> {
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, deadline);
    } catch (error) {
      // another process took the port between our check and the driver's bind
      if (!(error instanceof DriverError && error.kind === 'failure' && /address already in use|bind\(\) failed/i.test(error.message)) || attempt >= 3) throw error;
    }
  }
}

async function startOnce(options: DriverOptions, deadline: number): Promise<Driver> {
  const port = await freeLoopbackPort();
  let child: ChildProcess;
  const log: WriteStream | undefined = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  const [command, ...args] = [...(options.xvfb ? onOwnDisplay(options.xvfb) : []), options.binary, `--port=${port}`];
  try {
    child = watched
      ? spawn(BASH, ['-c', WATCHDOG, 'coord-driver-watchdog', command!, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    throw new DriverError('failure', `cannot start ${options.binary}: ${(error as Error).message}`);
  }
  child.stdin!.on('error', () => {}); // never written to: it only has to stay open while the driver should run
  let output = '';
  const onData = (chunk: Buffer) => {
    log?.write(chunk);
    if (output.length < 8192) output += chunk.toString();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`${options.binary} could not run: ${error.message}`));
    child.once('exit', (code, signal) => {
      const lines = output.trim().split('\n');
      const watchdog = lines.findLast((l) => l.startsWith(WATCHDOG_SAYS))?.slice(WATCHDOG_SAYS.length);
      const last = lines.findLast((l) => l.trim() && !l.startsWith(WATCHDOG_SAYS));
      resolve(`${options.binary} ${watchdog ?? `exited (${signal ?? `code ${code}`})`}${last ? `: ${last}` : ''}`);
    });
  });
  let gone = false;
  void exited.then(() => (gone = true));
  const stop = async () => {
    if (!gone) {
      if (watched) child.stdin!.destroy(); // the watchdog kills the driver's group and exits
      else child.kill('SIGTERM');
      const quit = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
      if (!quit) child.kill('SIGKILL');
      await exited;
    }
    log?.end();
  };
  for (;;) {
    if (gone) {
      await stop();
      throw new DriverError('failure', await exited);
    }
    try {
      const status = await hop({ host: '127.0.0.1', port }, 'GET', '/status', { host: `127.0.0.1:${port}` }, undefined, options.signal, 2000);
      if (status.status === 200 && (JSON.parse(status.body.toString()) as { value?: { ready?: boolean } }).value?.ready) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || options.signal?.aborted) {
      await stop();
      throw new DriverError('timeout', `${options.binary} did not answer /status ready within ${options.timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    port,
    pid: child.pid!,
    exited,
    stop,
    get running() {
      return !gone;
    },
  };
}
