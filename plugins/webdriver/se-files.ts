// Selenium Grid's managed downloads. A session asked for with
// `se:downloadsEnabled: true` gets Chromium's download folder set to the
// downloads folder of its session folder on the node; the client then reaches
// what the page downloaded through the grid:
//   GET    /session/{id}/se/files                 → {"value": {"names": [...]}}
//   POST   /session/{id}/se/files {"name": "x"}   → {"value": {"filename": "x", "contents": "<base64 zip>"}}
//   DELETE /session/{id}/se/files                 → {"value": null}
// (the shapes selenium-webdriver's getDownloadableFiles, downloadFile and
// deleteDownloadableFiles and Selenium Grid 4 use).
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { parseJson } from './http.ts';
import { W3CError, type Capabilities } from './w3c.ts';

/** The capability that asks for managed downloads. */
export const DOWNLOADS_ENABLED = 'se:downloadsEnabled';

/** Chromium's name for a download still in progress: not listed until it is complete. */
const PARTIAL = /\.crdownload$/;

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
export function serveDownloads(method: string, body: Buffer, dir: string | undefined): unknown {
  if (!dir) throw new W3CError('unknown error', `se/files: downloads are not enabled for this session: ask for the capability "${DOWNLOADS_ENABLED}": true`);
  if (method === 'GET') return { names: downloadedNames(dir) };
  if (method === 'DELETE') {
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
    return null;
  }
  if (method === 'POST') {
    const name = (parseJson(body) as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || !name) throw new W3CError('invalid argument', 'se/files: the body must be {"name": "<a downloaded file\'s name>"}');
    if (!downloadedNames(dir).includes(name)) throw new W3CError('invalid argument', `se/files: no downloaded file is named "${name.slice(0, 200)}" (GET se/files lists them)`);
    const zip = zipSync({ [name]: readFileSync(join(dir, name)) });
    return { filename: name, contents: Buffer.from(zip).toString('base64') };
  }
  throw new W3CError('unknown method', `${method} se/files: use GET, POST or DELETE`);
}

/** Complete files in the downloads folder. */
function downloadedNames(dir: string): string[] {
  return readdirSync(dir).filter((name) => !PARTIAL.test(name) && statSync(join(dir, name), { throwIfNoEntry: false })?.isFile());
}
