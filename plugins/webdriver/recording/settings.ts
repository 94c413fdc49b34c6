// Whether a session is recorded, and the ffmpeg that encodes it.
import { ConfigError, findExecutable } from '../../../entries/plugin.ts';
import type { WebDriverConfig } from '../config.ts';
import type { Capabilities } from '../session/capabilities.ts';

/** Does the session want a recording? se:recordVideo (Selenium's docker images) or coord:options.recordVideo; else the grid's default. */
export function wantsRecording(caps: Capabilities, gridDefault: boolean): boolean {
  const options = caps['coord:options'];
  const asked = [caps['se:recordVideo'], typeof options === 'object' && options !== null ? (options as Record<string, unknown>).recordVideo : undefined];
  for (const value of asked) {
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
  }
  return gridDefault;
}

/** The ffmpeg to run: the configured path, or the name found on PATH; undefined when there is none. */
export const findEncoder = findExecutable;

/** The encoder, or one clear start-up error when recording is on by default and there is none. */
export function checkEncoder(config: Pick<WebDriverConfig, 'recording'>): string | undefined {
  const found = findEncoder(config.recording.ffmpeg);
  if (!found && config.recording.enabled) {
    const where = config.recording.ffmpeg.includes('/') ? `at ${config.recording.ffmpeg}` : `named "${config.recording.ffmpeg}" on PATH`;
    throw new ConfigError([`webdriver.recording.enabled is true but there is no ffmpeg ${where}: install it (apt-get install ffmpeg) or set webdriver.recording.ffmpeg to its path`]);
  }
  return found;
}
