// Finding a program the way a shell would: a path is taken as it is, a bare
// name is looked up in PATH's folders. Used for ffmpeg by the webdriver
// plugin's recordings and the browser grid's videos.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The program to run: `binary` when it is a runnable path, else the first
 * runnable `binary` in PATH (or in `path`, a PATH-like list); undefined when
 * there is none.
 *
 * @example
 * const ffmpeg = findExecutable(ctx.config.ffmpeg ?? 'ffmpeg');
 * if (!ffmpeg) throw new ConfigError('no ffmpeg in PATH: install it or set cron.ffmpeg to its path');
 */
export function findExecutable(binary: string, path = process.env.PATH ?? ''): string | undefined {
  const runnable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (binary.includes('/')) return runnable(binary) ? binary : undefined;
  return path.split(delimiter).filter(Boolean).map((dir) => join(dir, binary)).find(runnable);
}
