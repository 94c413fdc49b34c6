// Selenium Grid's file upload, POST /session/{id}/se/file: what Selenium's
// remote file detectors (selenium-webdriver's remote.FileDetector, Python's
// LocalFileDetector, Java's setFileDetector) send before typing a local path
// into an <input type=file>. The body is {"file": "<base64 zip>"}; the zip
// holds one file, which is unpacked into a fresh folder of the session's
// folder on the node, and the answer is its absolute path — as Selenium Grid
// answers, so the client then types that path instead of its own.
import { mkdtempSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { unzipSync } from 'fflate';
import { parseJson } from '../http/serve.ts';
import { W3CError } from '../errors.ts';

/** Largest total an upload may unpack to, as its zip declares it (a small zip must not fill the node's disk). */
export const UNPACKED_LIMIT = 512 * 1024 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Unpacks an upload's zip into a new folder under `uploads`; resolves with the unpacked file's absolute path. */
export function unpackUpload(body: Buffer, uploads: string): string {
  const encoded = (parseJson(body) as { file?: unknown } | null)?.file;
  if (typeof encoded !== 'string' || !encoded) throw new W3CError('invalid argument', 'se/file: the body must be {"file": "<a zip file, base64-encoded>"}');
  const compact = encoded.replace(/\s+/g, ''); // MIME base64 (Java) wraps lines
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw new W3CError('invalid argument', 'se/file: "file" is not base64');
  const entries = readZip(Buffer.from(compact, 'base64'));
  const names = Object.keys(entries);
  if (!names.length) throw new W3CError('invalid argument', 'se/file: the zip holds no file');
  for (const name of names) safeName(name);
  const folder = mkdtempSync(join(uploads, 'upload-'));
  for (const [name, data] of Object.entries(entries)) {
    const path = join(folder, name);
    if (name.endsWith('/')) mkdirSync(path, { recursive: true });
    else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, data);
    }
  }
  const top = readdirSync(folder);
  // Selenium Grid's rule: the zip carries exactly one file (or folder)
  if (top.length !== 1) throw new W3CError('invalid argument', `se/file: expected the zip to hold 1 file, it holds ${top.length}`);
  return join(folder, top[0]!);
}

function readZip(zip: Buffer): Record<string, Uint8Array> {
  let declared = 0;
  try {
    return unzipSync(zip, {
      filter(file) {
        declared += file.originalSize;
        if (declared > UNPACKED_LIMIT) throw new W3CError('invalid argument', `se/file: the zip unpacks to more than ${UNPACKED_LIMIT} bytes`);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof W3CError) throw error;
    throw new W3CError('invalid argument', `se/file: "file" is not a zip file (${(error as Error).message})`);
  }
}

/** An entry name that stays inside the upload's folder: relative, no "..", no drive letter. */
function safeName(name: string): void {
  const parts = name.replaceAll('\\', '/').split('/');
  if (name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name) || parts.some((p) => p === '..') || name.includes('\0')) {
    throw new W3CError('invalid argument', `se/file: the zip entry "${name.slice(0, 200)}" points outside its folder`);
  }
}
