// A role that could not start because its port is taken is the user's to fix,
// so the CLI names the port and the config key that set it (e.g.
// browser-grid.port) and exits 2, whichever plugin's listen() failed: the
// errno error (EADDRINUSE, with .port) is somewhere in the StartError's causes.
import { StartError } from '../core/errors.ts';
import { UsageError } from './errors.ts';

/** A StartError whose cause is a port in use becomes a UsageError naming the key; anything else is returned as it is. */
export function explainStartError(error: unknown, sections: Readonly<Record<string, unknown>>): unknown {
  if (!(error instanceof StartError)) return error;
  const port = portInUse(error);
  if (port === undefined) return error;
  const key = keyOfPort(sections, port);
  const fix = key ? `${key} is ${port}: choose a free port with --set ${key}=PORT` : `port ${port} is in use by another process`;
  return new UsageError(`${error.message} (${fix})`, { code: 'COORD_ERR_CLI_PORT_IN_USE', cause: error });
}

/** The port of the first EADDRINUSE in the chain of causes (or of a message that says a port is already in use). */
function portInUse(error: unknown): number | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    const errno = at as Error & { code?: unknown; port?: unknown };
    if (errno.code === 'EADDRINUSE' && typeof errno.port === 'number') return errno.port;
    const said = /\bport (\d+)\b.*\balready in use\b|EADDRINUSE[^\n]*:(\d+)\b/.exec(at.message);
    if (said) return Number(said[1] ?? said[2]);
  }
  return undefined;
}

/** The config path (plugin.key.sub) whose value is this port, a key named like a port first. */
function keyOfPort(sections: Readonly<Record<string, unknown>>, port: number): string | undefined {
  const found: string[] = [];
  const visit = (value: unknown, path: string) => {
    if (value === port) found.push(path);
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) visit(v, `${path}.${k}`);
  };
  for (const [plugin, section] of Object.entries(sections)) visit(section, plugin);
  return found.find((path) => /port$/i.test(path)) ?? found[0];
}
