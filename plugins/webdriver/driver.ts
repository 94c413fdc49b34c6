// One chromedriver process: started on a free port (it prints which), ready
// once /status says so, stopped with its browsers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { hop } from './http.ts';

export class DriverError extends Error {
  override readonly name = 'DriverError';
  constructor(
    readonly kind: 'timeout' | 'failure',
    message: string,
  ) {
    super(message);
  }
}

export interface Driver {
  readonly port: number;
  readonly pid: number;
  /** Resolves when the process exits (for whatever reason), with a description. */
  readonly exited: Promise<string>;
  stop(): Promise<void>;
}

export interface DriverOptions {
  binary: string;
  /** Longest the driver may take to print its port and answer /status ready. */
  timeoutMs: number;
  logFile?: string;
  signal?: AbortSignal;
}

export async function startDriver(options: DriverOptions): Promise<Driver> {
  let child: ChildProcess;
  const log: WriteStream | undefined = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  try {
    child = spawn(options.binary, ['--port=0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new DriverError('failure', `cannot start ${options.binary}: ${(error as Error).message}`);
  }
  let output = '';
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`${options.binary} could not run: ${error.message}`));
    child.once('exit', (code, signal) => resolve(`${options.binary} exited (${signal ?? `code ${code}`})${output ? `: ${output.trim().split('\n').at(-1)}` : ''}`));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2000))]);
      if (!gone) child.kill('SIGKILL');
      await exited;
    }
    log?.end();
  };
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DriverError('timeout', `${options.binary} did not report its port within ${options.timeoutMs} ms`)), options.timeoutMs);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      log?.write(text);
      if (output.length < 4096) output += text;
      const found = /on port (\d+)/.exec(output);
      if (found && Number(found[1]) > 0) {
        clearTimeout(timer);
        resolve(Number(found[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((why) => {
      clearTimeout(timer);
      reject(new DriverError('failure', why));
    });
  }).catch(async (error) => {
    await stop();
    throw error;
  });
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new DriverError('failure', await exited);
    try {
      const status = await hop({ host: '127.0.0.1', port }, 'GET', '/status', {}, undefined, options.signal, 2000);
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
  return { port, pid: child.pid!, exited, stop };
}
