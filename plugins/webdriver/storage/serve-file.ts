// Answers GET/HEAD for one recording file with HTTP Range (RFC 9110), so a
// browser's <video> can seek: 200 for the whole file, 206 with Content-Range
// for one byte range, 416 for a range past the end. A multi-range request is
// answered with the whole file (allowed, and no player sends one).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';

/** The byte range asked for, inclusive; 'whole' when none (or one we answer whole); 'unsatisfiable' when it lies past the end. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'whole' | 'unsatisfiable' {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header?.trim() ?? '');
  if (!match || (match[1] === '' && match[2] === '')) return 'whole';
  const [, from, to] = match as unknown as [string, string, string];
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

export async function serveFile(req: IncomingMessage, res: ServerResponse, path: string, contentType: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) {
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'no such recording (never recorded, or deleted by the storage limits)' }));
    return;
  }
  const size = info.size;
  const headers: Record<string, string | number> = {
    'content-type': contentType,
    'accept-ranges': 'bytes',
    'last-modified': info.mtime.toUTCString(),
    etag: `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`,
    'cache-control': 'private, max-age=3600',
  };
  // If-Range with another validator: the file changed, so the whole of it
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== headers.etag ? 'whole' : parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...headers, 'content-range': `bytes */${size}` }).end();
    return;
  }
  const { start, end } = range === 'whole' ? { start: 0, end: size - 1 } : range;
  const status = range === 'whole' ? 200 : 206;
  if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  headers['content-length'] = size === 0 ? 0 : end - start + 1;
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return;
  }
  await pipeline(createReadStream(path, { start, end }), res).catch(() => res.destroy());
}
