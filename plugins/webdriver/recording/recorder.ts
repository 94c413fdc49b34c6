// A session's screen recording. Headless Chromium has no screen to grab, so
// the node asks the browser itself for frames over the DevTools protocol
// (Page.startScreencast on the session's page, reached through the
// debuggerAddress chromedriver reports) and pipes them into ffmpeg, which
// encodes an MP4 (H.264, moov atom first so browsers can seek at once). Chromium
// only sends a frame when the page changes: the last one is repeated at the
// configured rate, so the video runs as long as the session did. (Whether a
// session is recorded, and with which ffmpeg: settings.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import { rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { WebDriverConfig } from '../config.ts';
import { partFile, recordingFile } from '../storage/files.ts';
import { WebDriverError } from '../errors.ts';
import { jpegSize } from './jpeg-size.ts';

export interface RecorderOptions {
  /** host:port of the browser's DevTools (goog:chromeOptions.debuggerAddress). */
  debuggerAddress: string;
  ffmpeg: string;
  folder: string;
  sessionId: string;
  recording: WebDriverConfig['recording'];
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface Recorded {
  file: string;
  bytes: number;
  startedAt: number;
  endedAt: number;
}

/** A DevTools failure: the recording cannot start or goes on without frames. */
const devtools = (message: string) => new WebDriverError(message, { code: 'COORD_ERR_WEBDRIVER_DEVTOOLS' });

const CONNECT_TIMEOUT_MS = 10_000;
/** Longest ffmpeg may take to finish the file after its input ends. */
const FINISH_TIMEOUT_MS = 60_000;
/** Past this much unwritten input ffmpeg is not keeping up: repeated frames are skipped rather than buffered. */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
/**
 * With no frame for this long the screencast is started again if it ended, and a screenshot
 * taken: a renderer swap racing the screencast's start (a client navigating as soon as its
 * session exists) may end it unheard, and the video would stay dark or frozen.
 */
const SILENCE_MS = 2000;
/** A DevTools call the recorder waits no longer for (a screenshot taken mid-navigation may never answer). */
const CALL_TIMEOUT_MS = 5000;

export class Recorder {
  private next = 1;
  private readonly calls = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  private page = '';
  private latest?: Buffer;
  private startedAt = 0;
  private written = 0;
  private lastAck = 0;
  /** When the last frame came, or the screencast was last started. */
  private heardAt = 0;
  private frames = 0;
  private recasting = false;
  private casting: Promise<void> = Promise.resolve();
  private encoder?: ChildProcess;
  private encoderExit?: Promise<{ code: number | null; stderr: string }>;
  private ticker?: ReturnType<typeof setInterval>;
  private stopping?: Promise<Recorded | undefined>;

  private constructor(
    private readonly socket: WebSocket,
    private readonly options: RecorderOptions,
  ) {
    socket.on('message', (data) => this.onMessage(JSON.parse(String(data)) as CdpMessage));
    socket.on('error', () => {});
    socket.on('close', () => {
      for (const call of this.calls.values()) call.reject(devtools('DevTools connection closed'));
      this.calls.clear();
    });
  }

  /** Seconds into the video at `at` (ms since the epoch): the video starts with its first frame; undefined before it. */
  offsetAt(at: number): number | undefined {
    return this.startedAt ? Math.max(0, (at - this.startedAt) / 1000) : undefined;
  }

  /** Connects to the browser and starts the screencast; resolves once frames are asked for. */
  static async start(options: RecorderOptions): Promise<Recorder> {
    const address = options.debuggerAddress.replace(/^localhost:/, '127.0.0.1:');
    const version = (await (await fetch(`http://${address}/json/version`, { signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) })).json()) as { webSocketDebuggerUrl?: string };
    if (!version.webSocketDebuggerUrl) throw devtools(`the browser at ${address} gave no DevTools WebSocket`);
    const socket = new WebSocket(version.webSocketDebuggerUrl.replace('ws://localhost:', 'ws://127.0.0.1:'), { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(devtools(`no DevTools connection to ${address} within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      socket.once('open', () => (clearTimeout(timer), resolve()));
      socket.once('error', (error) => (clearTimeout(timer), reject(error)));
    });
    const recorder = new Recorder(socket, options);
    try {
      await recorder.attach();
    } catch (error) {
      socket.terminate();
      throw error;
    }
    const { fps } = options.recording;
    recorder.ticker = setInterval(() => recorder.tick(), 1000 / fps);
    return recorder;
  }

  private call(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(id);
        reject(devtools(`${method}: no answer within ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      const settle = <T>(f: (v: T) => void) => (v: T) => (clearTimeout(timer), f(v));
      this.calls.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }), (error) => error && reject(error));
    });
  }

  private tick(): void {
    this.writeDue();
    if (this.page && !this.recasting && !this.stopping && Date.now() - this.heardAt > SILENCE_MS) {
      this.recasting = true;
      void this.screencast(this.page).catch(() => {}).finally(() => (this.recasting = false));
    }
  }

  /** Screencasts the session's page (the first page target; another once that one closes). */
  private async attach(): Promise<void> {
    const { targetInfos } = (await this.call('Target.getTargets')) as { targetInfos: { targetId: string; type: string }[] };
    const page = targetInfos.find((t) => t.type === 'page');
    if (!page) throw devtools('the browser has no page to record');
    const { sessionId } = (await this.call('Target.attachToTarget', { targetId: page.targetId, flatten: true })) as { sessionId: string };
    this.page = sessionId;
    // a navigation to another site swaps the page's renderer, which may end its screencast: frameNavigated restarts it
    await this.call('Page.enable', {}, sessionId);
    await this.screencast(sessionId);
  }

  /** Starts the screencast if it is off, and takes a screenshot to stand in for a still page. One at a time. */
  private screencast(sessionId: string): Promise<void> {
    const started = this.casting.then(() => this.startScreencast(sessionId));
    this.casting = started.catch(() => {});
    return started;
  }

  private async startScreencast(sessionId: string): Promise<void> {
    const { quality, maxWidth, maxHeight } = this.options.recording;
    this.heardAt = Date.now();
    // Chromium refuses a start while its screencast is on: then it is on, as wanted (stopping it to
    // start again loses the frames of the next second or two)
    await this.call('Page.startScreencast', { format: 'jpeg', quality, maxWidth, maxHeight, everyNthFrame: 1 }, sessionId).catch((error: Error) => {
      if (!/already active/i.test(error.message)) throw error;
    });
    // The screencast sends a frame only when the page repaints: a page that is already still would give
    // none, and the session no video. A screenshot stands in until the screencast sends a frame.
    const frames = this.frames;
    const shot = (await this.call('Page.captureScreenshot', { format: 'jpeg', quality }, sessionId).catch(() => undefined)) as { data?: string } | undefined;
    if (shot?.data && this.page === sessionId && this.frames === frames) this.onFrame(Buffer.from(shot.data, 'base64'));
  }

  private onMessage(message: CdpMessage): void {
    if (message.id !== undefined) {
      const call = this.calls.get(message.id);
      this.calls.delete(message.id);
      if (message.error) call?.reject(devtools(`${message.error.message}`));
      else call?.resolve(message.result);
      return;
    }
    if (message.method === 'Page.screencastFrame' && message.sessionId === this.page) {
      const frame = message.params as { data: string; sessionId: number };
      this.onFrame(Buffer.from(frame.data, 'base64'));
      // Chromium sends the next frame once this one is acknowledged: acknowledging at the video's rate, not at
      // once, keeps an animating page from sending (and this process from decoding) frames the video drops
      const page = this.page;
      const wait = Math.max(0, this.lastAck + 1000 / this.options.recording.fps - Date.now());
      setTimeout(() => {
        this.lastAck = Date.now();
        if (!this.stopping && page === this.page) void this.call('Page.screencastFrameAck', { sessionId: frame.sessionId }, page).catch(() => {});
      }, wait);
    } else if (message.method === 'Page.frameNavigated' && message.sessionId === this.page && !this.stopping && !(message.params as { frame?: { parentId?: string } }).frame?.parentId) {
      void this.screencast(this.page).catch(() => {});
    } else if (message.method === 'Target.detachedFromTarget' && (message.params as { sessionId?: string }).sessionId === this.page && !this.stopping) {
      this.page = '';
      void this.attach().catch(() => {}); // the window closed: record the next one, if any
    }
  }

  private onFrame(jpeg: Buffer): void {
    if (this.stopping) return;
    this.heardAt = Date.now();
    this.frames++;
    if (!this.encoder) {
      const size = jpegSize(jpeg);
      if (!size) return;
      this.startEncoder(size.width, size.height);
      this.startedAt = Date.now();
    }
    this.latest = jpeg;
    this.writeDue();
  }

  private startEncoder(width: number, height: number): void {
    const { fps } = this.options.recording;
    // even sizes for yuv420p; later frames of another size (a resized window) are fitted into the first one's
    const w = width - (width % 2);
    const h = height - (height % 2);
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      '-f', 'image2pipe', '-c:v', 'mjpeg', '-framerate', String(fps), '-i', 'pipe:0',
      '-vf', `scale=${w}:${h}:force_original_aspect_ratio=decrease,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,format=yuv420p`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-threads', '1', '-r', String(fps),
      '-movflags', '+faststart', '-f', 'mp4', '-y', join(this.options.folder, partFile(this.options.sessionId)),
    ];
    const encoder = spawn(this.options.ffmpeg, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    encoder.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    encoder.stdin!.on('error', () => {}); // ffmpeg gone: its exit says why
    this.encoderExit = new Promise((resolve) => {
      encoder.once('error', (error) => resolve({ code: -1, stderr: error.message }));
      encoder.once('exit', (code) => resolve({ code, stderr }));
    });
    this.encoder = encoder;
  }

  /** Writes the latest frame as often as needed for the video to be as long as the time since the first frame. */
  private writeDue(): void {
    const stdin = this.encoder?.stdin;
    if (!this.latest || !stdin || stdin.destroyed) return;
    const due = Math.floor(((Date.now() - this.startedAt) * this.options.recording.fps) / 1000) + 1;
    while (this.written < due) {
      if (stdin.writableLength > MAX_BUFFERED_BYTES) {
        this.written = due; // ffmpeg lags: drop the repeats
        break;
      }
      stdin.write(this.latest);
      this.written++;
    }
  }

  /** Stops recording and finishes the file: resolves with it (moved to its final name), or undefined when no frame ever came. */
  stop(): Promise<Recorded | undefined> {
    this.stopping ??= (async () => {
      clearInterval(this.ticker);
      this.writeDue();
      this.socket.terminate();
      const encoder = this.encoder;
      if (!encoder) return undefined;
      encoder.stdin!.end();
      const endedAt = Date.now();
      const timer = setTimeout(() => encoder.kill('SIGKILL'), FINISH_TIMEOUT_MS);
      const { code, stderr } = await this.encoderExit!;
      clearTimeout(timer);
      const part = join(this.options.folder, partFile(this.options.sessionId));
      if (code !== 0) {
        await unlink(part).catch(() => {});
        throw new WebDriverError(`ffmpeg failed (exit ${code}): ${stderr.trim().split('\n').at(-1) ?? ''}`, { code: 'COORD_ERR_WEBDRIVER_FFMPEG' });
      }
      const file = recordingFile(this.options.sessionId);
      await rename(part, join(this.options.folder, file));
      const { size } = await stat(join(this.options.folder, file));
      return { file, bytes: size, startedAt: this.startedAt, endedAt };
    })();
    return this.stopping;
  }
}

interface CdpMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { message: string };
  sessionId?: string;
}
