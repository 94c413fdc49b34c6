// The node's side of a recording: start it once the driver's session exists,
// and when the session ends finish the file in the storage's folder and
// announce it (session:{id}:storage and storage:{sid}:metadata.pending).
// A recording that cannot start or finish is logged, never fails the session.
import { mkdir } from 'node:fs/promises';
import type { Ctx } from '../context.ts';
import { Recorder } from './recorder.ts';
import { findEncoder } from './settings.ts';
import { announceRecording, storageFolder, storageId } from '../storage/files.ts';
import type { Capabilities } from '../session/capabilities.ts';
import { WebDriverError } from '../errors.ts';

export interface Recording {
  recorder: Recorder;
  storage: string;
}

export async function startRecording(ctx: Ctx, sessionId: string, actual: Capabilities): Promise<Recording | undefined> {
  const { config, logger } = ctx;
  const ffmpeg = findEncoder(config.recording.ffmpeg);
  const started = Date.now();
  const debuggerAddress = (actual['goog:chromeOptions'] as { debuggerAddress?: unknown } | undefined)?.debuggerAddress;
  try {
    if (!ffmpeg) throw new WebDriverError(`no ffmpeg (webdriver.recording.ffmpeg = "${config.recording.ffmpeg}")`, { code: 'COORD_ERR_WEBDRIVER_NO_FFMPEG' });
    if (typeof debuggerAddress !== 'string') throw new WebDriverError('the driver reported no goog:chromeOptions.debuggerAddress', { code: 'COORD_ERR_WEBDRIVER_DEVTOOLS' });
    const folder = storageFolder(config);
    await mkdir(folder, { recursive: true });
    const recorder = await Recorder.start({ debuggerAddress, ffmpeg, folder, sessionId, recording: config.recording, warn: (m, f) => logger.warn(m, { sessionId, ...f }) });
    logger.info('recording the session', { sessionId, folder, ms: Date.now() - started });
    return { recorder, storage: storageId(config) };
  } catch (error) {
    logger.warn('the session asked for a recording but none could be started', { sessionId, error: (error as Error).message });
    return undefined;
  }
}

export async function finishRecording(ctx: Ctx, sessionId: string, recording: Recording): Promise<void> {
  try {
    const done = await recording.recorder.stop();
    if (!done) return ctx.logger.warn('the recording has no frame: nothing is kept', { sessionId });
    await announceRecording(ctx, recording.storage, {
      sessionId,
      file: done.file,
      bytes: done.bytes,
      startedAt: new Date(done.startedAt).toISOString(),
      endedAt: new Date(done.endedAt).toISOString(),
    });
    ctx.logger.info('recording finished', { sessionId, storage: recording.storage, file: done.file, bytes: done.bytes });
  } catch (error) {
    ctx.logger.warn('the recording could not be finished', { sessionId, error: (error as Error).message });
  }
}
