// What the orchestrator's API accepts beyond its token. Without a token it
// listens on loopback, but a browser on the same machine can still reach it:
// a web page posting across origins (Origin: http://evil.example), or a
// DNS-rebinding name that resolves to 127.0.0.1 (Host: attacker.example).
// So: the Host must be a loopback name, the address the API binds, or one of
// load-test.allowedHosts; an Origin must be the page's own or one of
// load-test.allowedOrigins; a POST must say it sends JSON (a cross-origin
// form or text/plain request cannot without a CORS preflight, which the API
// never grants); and a start may only name a scenario inside
// load-test.scenarioDir (default: the orchestrator's working folder) or the
// one load-test.scenario names.
import { realpathSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { LoadTestConfig } from '../config.ts';
import { ForbiddenError, InputError } from '../errors.ts';

const LOOPBACK = ['localhost', '127.0.0.1', '::1'];
const SCENARIO_FILE = /\.(ts|mts|js|mjs|cjs)$/;

type GuardConfig = Pick<LoadTestConfig, 'host' | 'allowedHosts' | 'allowedOrigins' | 'scenario' | 'scenarioDir'>;

/** Throws ForbiddenError when the request's Host, Origin or content type is not accepted. */
export function guardRequest(config: GuardConfig, req: IncomingMessage): void {
  const host = req.headers.host ?? '';
  const hostName = nameOf(host);
  if (!hostAllowed(config, hostName)) {
    throw new ForbiddenError(`Host "${host}" is not allowed: the API answers ${[...allowedNames(config)].join(', ')} (add the name to load-test.allowedHosts)`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(config, origin, host)) {
    throw new ForbiddenError(`Origin "${origin}" is not allowed: the API answers its own page only (add the origin to load-test.allowedOrigins)`);
  }
  if (req.method === 'POST') {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      throw new ForbiddenError(`a POST must send Content-Type: application/json, not "${type || 'none'}"`);
    }
  }
}

/** The absolute scenario path a start may load; an InputError names what is allowed. */
export function allowedScenario(config: GuardConfig, requested: string | undefined): string | undefined {
  if (requested === undefined) return undefined;
  const dir = resolve(config.scenarioDir ?? '.');
  const path = resolve(dir, requested);
  if (config.scenario && real(path) === real(resolve(config.scenario))) return path;
  const inside = relative(real(dir), real(path));
  if (!SCENARIO_FILE.test(path) || inside.startsWith('..') || isAbsolute(inside)) {
    throw new InputError(
      `scenario "${requested}" is not allowed: the API starts scenario modules (.ts, .js, .mjs) inside ${dir}` +
        `${config.scenario ? ` or ${config.scenario}` : ''} (set load-test.scenarioDir to allow another folder)`,
    );
  }
  return path;
}

function allowedNames(config: GuardConfig): Set<string> {
  const names = new Set(LOOPBACK);
  if (!['0.0.0.0', '::', ''].includes(config.host)) names.add(nameOf(config.host));
  for (const h of config.allowedHosts ?? []) names.add(nameOf(h));
  return names;
}

function hostAllowed(config: GuardConfig, name: string): boolean {
  if (config.allowedHosts?.includes('*')) return true;
  return allowedNames(config).has(name);
}

function originAllowed(config: GuardConfig, origin: string, host: string): boolean {
  if (config.allowedOrigins?.includes('*') || config.allowedOrigins?.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // 'null' (a sandboxed frame, a file:// page) and anything else that is no origin
  }
  // The page the API serves calls it from its own origin: same host and port as the request's Host.
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.host.toLowerCase() === host.toLowerCase() && hostAllowed(config, nameOf(url.host));
}

/** 'Example.com:8089' → 'example.com'; '[::1]:8089' → '::1'. */
function nameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colons = h.split(':').length - 1;
  return colons === 1 ? h.slice(0, h.indexOf(':')) : h;
}

/** The path with symbolic links resolved where it exists (a link inside the folder must not lead out of it). */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(real(parent), basename(path));
  }
}
