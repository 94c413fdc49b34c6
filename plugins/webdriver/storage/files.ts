// A storage's folder, as nodes and the storage role both see it: one MP4 per
// recorded session ({sessionId}.mp4), written first under a hidden part name
// and renamed once ffmpeg has finished it, so a file with the final name is
// always whole. The folder is the truth: the storage role re-reads it when it
// starts, so a recording announced while no storage role ran is not lost.
import { createHash } from 'node:crypto';
import { readdir, stat, statfs, unlink } from 'node:fs/promises';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { WebDriverConfig } from '../config.ts';
import type { Ctx } from '../context.ts';

/** TTL of storage:{sid}:{pid}:host (WebGrid: EX 60 s). */
export const STORAGE_HOST_TTL = 60;

/** A finished recording's file name; the session id is the name. */
export const RECORDING_FILE = /^([A-Za-z0-9-]{1,64})\.mp4$/;
const PART_FILE = /^\.([A-Za-z0-9-]{1,64})\.mp4\.part$/;
/** A part file untouched this long belongs to a node that died while recording. */
const STALE_PART_MS = 3600_000;

export const recordingFile = (sessionId: string) => `${sessionId}.mp4`;
export const partFile = (sessionId: string) => `.${sessionId}.mp4.part`;

/** This machine's storage ID unless configured: stable across restarts, so its folder and pending list are found again. */
export function storageId(config: Pick<WebDriverConfig, 'storage'>): string {
  return config.storage.id ?? `s-${createHash('sha1').update(`coord-webdriver-storage:${hostname()}`).digest('hex').slice(0, 12)}`;
}

export function storageFolder(config: Pick<WebDriverConfig, 'storage'>): string {
  // Per user: two users of one machine each get their own folder, not one whose first owner locks the other out.
  return config.storage.folder ?? join(tmpdir(), `coord-recordings-${userInfo().username}`, storageId(config));
}

export interface Recording {
  file: string;
  sessionId: string;
  bytes: number;
  /** When it was finished (the file's modification time), Unix ms. */
  at: number;
}

/** The finished recordings in the folder, oldest first; stale part files are removed on the way. */
export async function readFolder(folder: string, now = Date.now()): Promise<Recording[]> {
  const found: Recording[] = [];
  for (const name of await readdir(folder)) {
    const finished = RECORDING_FILE.exec(name);
    const part = !finished && PART_FILE.test(name);
    if (!finished && !part) continue;
    const info = await stat(join(folder, name)).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (part) {
      if (now - info.mtimeMs > STALE_PART_MS) await unlink(join(folder, name)).catch(() => {});
      continue;
    }
    found.push({ file: name, sessionId: finished![1]!, bytes: info.size, at: info.mtimeMs });
  }
  return found.sort((a, b) => a.at - b.at || a.file.localeCompare(b.file));
}

/** Which recordings the limits remove: every one older than maxAge, then the oldest until the rest fit in maxBytes (0: no limit). */
export function pastLimits(oldestFirst: readonly Recording[], limits: { maxBytes: number; maxAge: number }, now = Date.now()): Recording[] {
  const doomed: Recording[] = [];
  let used = oldestFirst.reduce((sum, r) => sum + r.bytes, 0);
  for (const r of oldestFirst) {
    const tooOld = limits.maxAge > 0 && now - r.at > limits.maxAge * 1000;
    const tooBig = limits.maxBytes > 0 && used > limits.maxBytes;
    if (!tooOld && !tooBig) continue;
    doomed.push(r);
    used -= r.bytes;
  }
  return doomed;
}

/** Bytes of the disk holding the folder. */
export async function diskBytes(folder: string): Promise<number> {
  const fs = await statfs(folder);
  return fs.blocks * fs.bsize;
}

/** What a node pushes to storage:{sid}:metadata.pending once a recording is in the folder. */
export interface PendingRecording {
  sessionId: string;
  file: string;
  bytes: number;
  startedAt: string;
  endedAt: string;
}

/** The node's announcement, in one transaction: the session names its storage, and the storage hears of the file. */
export async function announceRecording(ctx: Pick<Ctx, 'backend' | 'keys'>, storage: string, recording: PendingRecording): Promise<void> {
  await ctx.backend.multi([
    ['SET', ctx.keys.sessionStorage({ sessionId: recording.sessionId }), storage],
    ['LPUSH', ctx.keys.storagePending({ storageId: storage }), JSON.stringify(recording)],
  ]);
}
