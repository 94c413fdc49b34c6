// CommonJS packages a command needs only on some paths (yaml for a config
// file, pino-pretty for a terminal, semver for a version range), loaded the
// first time they are used: `coord grid status --redis URL` pays for none.
// Synchronous, so the callers (loadConfig, createLogger) stay synchronous.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A getter that requires `name` (a CommonJS package) on its first call and
 * returns the same module after: a package only some paths need is loaded
 * only when one of them runs, and the caller stays synchronous.
 *
 * @example
 * import type Semver from 'semver';
 * const semver = lazyModule<typeof Semver>('semver');
 * // … later, only on the path that needs it:
 * if (!semver().satisfies(version, '>=120')) throw new ConfigError(`browser version ${version} is too old`);
 */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}

/** The yaml package (config files, `coord config --dump`). */
export const yaml = lazyModule<typeof import('yaml')>('yaml');
