// Selenium Grid's managed downloads. A session asked for with
// `se:downloadsEnabled: true` gets Chromium's download folder set to the
// downloads folder of its session folder on the node; the client then reaches
// what the page downloaded through the grid:
//   GET    /session/{id}/se/files                 → {"value": {"names": [...], "files": [{name, size, creationTime, lastModifiedTime}]}}
//   POST   /session/{id}/se/files {"name": "x"}   → {"value": {"filename": "x", "contents": "<base64 zip>"}}
//   DELETE /session/{id}/se/files                 → {"value": null}
// (the shapes selenium-webdriver's getDownloadableFiles, downloadFile and
// deleteDownloadableFiles and Selenium Grid 4 use; `files` is Selenium 4.39+'s
// HasDownloads.DownloadedFile, times in milliseconds since the epoch). Only
// finished downloads are listed: not Chromium's .crdownload files, nor the
// hidden temporary file it writes before one (.org.chromium.Chromium.XXXXXX).
import { createReadStream, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Zip, ZipDeflate } from 'fflate';
import { parseJson } from '../http/serve.ts';
import { W3CError } from '../errors.ts';
import type { Capabilities } from '../session/capabilities.ts';

/** The capability that asks for managed downloads. */
export const DOWNLOADS_ENABLED = 'se:downloadsEnabled';

/** Chromium's names for a download not finished: in progress, or the temporary file it starts with (Chromium's, or Google Chrome's). */
const PARTIAL = /\.crdownload$|^\.(?:org\.chromium\.Chromium|com\.google\.Chrome)\./;

/** One finished download, as Selenium's HasDownloads.DownloadedFile serializes. */
interface DownloadedFile {
  name: string;
  size: number;
  creationTime: number;
  lastModifiedTime: number;
}

/** The driver's capabilities with Chromium's download folder set to `dir` (the client's other prefs kept). */
export function withDownloadFolder(caps: Capabilities, dir: string): Capabilities {
  const options = caps['goog:chromeOptions'];
  // options chromedriver will refuse anyway reach it unchanged, so its refusal reaches the client
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) return caps;
  const given = (options ?? {}) as { prefs?: unknown };
  const prefs = typeof given.prefs === 'object' && given.prefs !== null && !Array.isArray(given.prefs) ? given.prefs : {};
  return {
    ...caps,
    'goog:chromeOptions': {
      ...given,
      prefs: { ...prefs, 'download.default_directory': dir, 'download.prompt_for_download': false, 'savefile.default_directory': dir },
    },
  };
}

/** The value of one se/files command's answer, on the session's downloads folder (`dir` undefined: downloads are not enabled). */
export async function serveDownloads(method: string, body: Buffer, dir: string | undefined): Promise<unknown> {
  if (!dir) throw new W3CError('unknown error', `se/files: downloads are not enabled for this session: ask for the capability "${DOWNLOADS_ENABLED}": true`);
  if (method === 'GET') {
    const files = downloadedFiles(dir);
    return { names: files.map((f) => f.name), files };
  }
  if (method === 'DELETE') {
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
    return null;
  }
  if (method === 'POST') {
    const name = (parseJson(body) as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || !name) throw new W3CError('invalid argument', 'se/files: the body must be {"name": "<a downloaded file\'s name>"}');
    if (!downloadedFiles(dir).some((f) => f.name === name)) throw new W3CError('invalid argument', `se/files: no downloaded file is named "${name.slice(0, 200)}" (GET se/files lists them)`);
    return { filename: name, contents: (await zipFile(dir, name)).toString('base64') };
  }
  throw new W3CError('unknown method', `${method} se/files: use GET, POST or DELETE`);
}

/**
 * A zip holding one file, deflated a chunk at a time as it is read: a large
 * download does not hold the event loop (the orchestrator's other sessions
 * keep being served) the way zipping it in one call would.
 */
async function zipFile(dir: string, name: string): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let failed: Error | null = null;
  const zip = new Zip((error, chunk) => {
    if (error) failed = error;
    else parts.push(chunk);
  });
  const entry = new ZipDeflate(name, { level: 6 });
  zip.add(entry);
  let last: Buffer | undefined;
  for await (const chunk of createReadStream(join(dir, name), { highWaterMark: 1 << 20 })) {
    if (last) entry.push(last);
    last = chunk as Buffer;
  }
  entry.push(last ?? new Uint8Array(0), true);
  zip.end();
  if (failed) throw failed; // never a truncated zip sent as if whole
  return Buffer.concat(parts);
}

/** Finished files in the downloads folder, by name. */
function downloadedFiles(dir: string): DownloadedFile[] {
  const files: DownloadedFile[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (PARTIAL.test(name)) continue;
    const stat = statSync(join(dir, name), { throwIfNoEntry: false });
    // birthtime is 0 where the file system keeps none: the change time then stands for it
    if (stat?.isFile()) files.push({ name, size: stat.size, creationTime: Math.round(stat.birthtimeMs || stat.ctimeMs), lastModifiedTime: Math.round(stat.mtimeMs) });
  }
  return files;
}
