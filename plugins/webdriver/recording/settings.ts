// Whether a session is recorded, and the ffmpeg that encodes it.
import { ConfigError, findExecutable } from '../../../entries/plugin.ts';
import type { WebDriverConfig } from '../config.ts';
import type { Capabilities } from '../session/capabilities.ts';

/** What the session says of a recording: se:recordVideo (Selenium's docker images) or coord:options.recordVideo; undefined when it says nothing. */
export function recordingAsked(caps: Capabilities): boolean | undefined {
  const options = caps['coord:options'];
  const asked = [caps['se:recordVideo'], typeof options === 'object' && options !== null ? (options as Record<string, unknown>).recordVideo : undefined];
  for (const value of asked) {
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
  }
  return undefined;
}

/** Does the session want a recording? What it asked; else the grid's default. */
export function wantsRecording(caps: Capabilities, gridDefault: boolean): boolean {
  return recordingAsked(caps) ?? gridDefault;
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
