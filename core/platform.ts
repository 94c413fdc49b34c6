// Everything that differs between Node (the compiled package, dist/) and Deno
// (the sources, `deno task coord`) lives here, so no other file asks which
// runtime it is on. Both run the node: built-ins; what differs is where the
// arguments come from, how a module path is turned into something import()
// takes, and whether module hooks exist (Node's module.register; Deno has an
// import map and runs .ts itself).
//
// `process` is the global both runtimes define, not `import 'node:process'`:
// importing that built-in as an ES module reads every property of process to
// build its namespace (allowedNodeEnvironmentFlags among them), ~10 ms of CPU
// that every importer of the plugin kit would pay.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// Read through globalThis so neither runtime's type declarations are needed.
const deno = (globalThis as { Deno?: { version: { deno: string }; args: string[] } }).Deno;

/** True when running under Deno. */
export const isDeno = deno !== undefined;

/** 'node v20.20.2' or 'deno 2.9.6'. */
export function runtimeName(): string {
  return isDeno ? `deno ${deno!.version.deno}` : `node ${process.version}`;
}

/** The command-line arguments after the script name. */
export function cliArgs(): string[] {
  return isDeno ? [...deno!.args] : process.argv.slice(2);
}

/**
 * The process environment (a copy: config reads it once). What a command
 * passes as `env` to loadConfig, on Node and Deno alike.
 *
 * @example
 * const config = loadConfig({ plugins: [plugin], env: environment() });
 */
export function environment(): Record<string, string | undefined> {
  return { ...process.env };
}

/** Ends the process with this exit code once pending output is written. */
export function exit(code: number): never {
  process.exit(code);
}

/** Sets the exit code without ending the process (lets open handles close first). */
export function setExitCode(code: number): void {
  process.exitCode = code;
}

/** Whether standard output is a terminal (readable logs) or a pipe/file (JSON lines). */
export function stdoutIsTTY(): boolean {
  return process.stdout.isTTY === true;
}

export function stderrIsTTY(): boolean {
  return process.stderr.isTTY === true;
}

export function writeStdout(text: string): void {
  process.stdout.write(text);
}

/**
 * Writes text to standard error as it is (add the newline yourself), on Node
 * and Deno alike: for a line beside a command's result, which goes to
 * standard output.
 *
 * @example
 * writeStderr(`coord-cron: ${jobs.length} jobs scheduled\n`);
 */
export function writeStderr(text: string): void {
  process.stderr.write(text);
}

/** A signal that asks the process to stop (Ctrl-C, or a process manager's stop). */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Calls `handler` on SIGINT and SIGTERM. Returns a function that removes the handlers. */
export function onStopSignals(handler: (signal: StopSignal) => void): () => void {
  const signals: StopSignal[] = ['SIGINT', 'SIGTERM'];
  const listeners = signals.map((signal) => {
    const listener = () => handler(signal);
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  };
}

/**
 * Turns what a user typed for a module (`./plugins/echo/index.js`, an absolute
 * path, or a file: URL) into a URL string import() accepts, resolved against
 * the working directory.
 */
export function moduleUrl(pathOrUrl: string, cwd = process.cwd()): string {
  if (/^file:\/\//.test(pathOrUrl)) return pathOrUrl;
  return pathToFileURL(isAbsolute(pathOrUrl) ? pathOrUrl : resolve(cwd, pathOrUrl)).href;
}

/** The working directory. */
export function cwd(): string {
  return process.cwd();
}

/**
 * Registers a Node module hook (module.register) from `hookUrl`, passing it
 * what `data()` returns. False where the runtime has none: Deno runs .ts
 * itself and maps coord's package name through deno.json's import map, so it
 * needs no hook (and `data` is not called).
 */
export async function registerModuleHook(hookUrl: string, data?: () => unknown): Promise<boolean> {
  if (isDeno) return false;
  const { register } = await import('node:module');
  register(hookUrl, data === undefined ? undefined : { data: data() });
  return true;
}
