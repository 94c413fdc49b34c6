// How the CLI ends on an error: one line `coord: <message>` on stderr, exit 2
// for what the user can fix in the command line or config (nothing was
// started), 1 for what went wrong while working. COORD_DEBUG=1 adds the stack.
import { ConfigError, PluginError, StartError, UrlError, UsageError } from '../core/errors.ts';

// Core owns it, so that plugin commands can throw it without importing the CLI.
export { UsageError };

export function exitCodeOf(error: unknown): number {
  // a role that would not start because of its config (e.g. a binary it names is missing) is the user's to fix
  if (error instanceof StartError) return exitCodeOf(error.cause) === 2 ? 2 : 1;
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof UrlError || error instanceof PluginError) return 2;
  if (error instanceof Error && error.name === 'CACError') return 2; // cac's own: unknown option, missing value, extra args
  return 1;
}

export function errorLine(error: unknown, debug: boolean): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = `coord: ${cacWording(error, text).replace(/\s*\n\s*/g, ' ')}`;
  return debug && error instanceof Error && error.stack ? `${line}\n${error.stack}` : line;
}

/** cac says "Unknown option `--x`"; say it the way the other messages do. */
function cacWording(error: unknown, text: string): string {
  if (!(error instanceof Error) || error.name !== 'CACError') return text;
  return text.replace(/`/g, '').replace(/^Unknown option/, 'unknown option').replace(/^Unused args:/, 'unexpected arguments:') + ' (see --help)';
}
