// A device list in a JSON or YAML file, re-read when it changes (polled by
// stat every watchInterval, which also sees editors that replace the file).
import { readFile, stat } from 'node:fs/promises';
import { createReadStream, unwatchFile, watchFile } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { DeviceListBuilder, toDeviceList, type DeviceList, type ReadCheck } from '../device-list.ts';
import { normalizeDevices } from '../devices.ts';
import { DeviceListError } from '../errors.ts';
import type { DeviceInfo } from '../values.ts';
import type { DeviceSource, SourceContext } from './source.ts';

export function fileSource(path: string, ctx: SourceContext): DeviceSource {
  const full = resolve(path);
  const fail = (err: unknown): never => {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DeviceListError(`devices file ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message}`, {
      code: 'COORD_ERR_OBNIZ_DEVICE_LIST_FILE',
    });
  };
  const list = async (): Promise<DeviceInfo[]> => {
    const text = await readFile(full, 'utf8').catch(fail);
    return normalizeDevices(parseText(text, `devices file ${path}`), `devices file ${path}`);
  };
  return {
    description: `file ${path}`,
    // the manager does not read a file whose version is as last applied (the parsed list is not kept:
    // 1,000,000 devices are several hundred MB of objects)
    async version() {
      const info = await stat(full).catch(fail);
      return `${info.ino}:${info.size}:${info.mtimeMs}`;
    },
    list,
    // a JSON array a slice at a time; anything else (YAML, {"devices": [...]}, text that is not JSON) read whole
    async read(check?: ReadCheck, onSlice?: (list: DeviceList) => Promise<void>): Promise<DeviceList> {
      const where = `devices file ${path}`;
      const built = new DeviceListBuilder(where, check);
      let invalid: unknown;
      const streamed = await eachJsonItem(
        full,
        (item, text, start, end, spaced) => {
          if (invalid) return;
          try {
            built.add(item, text, start, end, spaced);
          } catch (err) {
            // kept until the text is known to be JSON: a syntax error further on is the one reported, as when read whole
            invalid = err;
          }
        },
        () => (invalid ? undefined : onSlice?.(built.list)),
      ).catch(fail);
      if (!streamed) return toDeviceList(await list());
      if (invalid) throw invalid;
      return built.list;
    },
    watch(onChange) {
      const listener = (now: { mtimeMs: number; size: number; ino: number }, before: { mtimeMs: number; size: number; ino: number }) => {
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size || now.ino !== before.ino) onChange();
      };
      watchFile(full, { interval: Math.max(50, ctx.config.watchInterval * 1000), persistent: false }, listener);
      return () => unwatchFile(full, listener);
    },
  };
}

/**
 * Text read at a time: under V8's 128 KiB for large objects, so each slice's strings die young
 * (1 MiB slices went to the large-object space, freed only by full collections: 600 MB of RSS).
 * Small enough that the manager turns to Redis's replies often: between two slices it sends the
 * next assignDevices calls of the chunk in flight. A 64 KiB slice took about 2 ms to parse, longer
 * than the 4 calls in flight kept Redis busy: a first sync of 1,000,000 devices left the manager
 * waiting 6.4 s for replies, 2.9 s with 16 KiB (one profiled run each), and took 15.5 s against
 * 14.1 s (medians of 3 paired rounds, bench/scale.mjs obniz).
 */
export const CHUNK = 16 * 1024;

/** JSON whitespace (JSON.parse allows no other between items). */
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
// character codes
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_LIST = 91;
const CLOSE_LIST = 93;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;

/**
 * Where each item of a slice is in the text given to JSON.parse: its start and end, and whether it
 * has whitespace outside its strings (its text then differs from JSON.stringify's).
 */
export type OnItem = (item: unknown, text: string, start: number, end: number, spaced: boolean) => void;

/**
 * Calls onItem with each item of a file whose text is one JSON array, parsed an
 * item at a time as the file is read (1,000,000 devices are 170 MB of text):
 * the items are delimited by following strings and brackets, those that end in
 * a slice given to JSON.parse together, and the text around them is checked as JSON.parse checks it, so
 * the items are exactly JSON.parse's of the whole text. onItem also gets the item's own text (a range
 * of `text`), so a caller can fingerprint or keep it without JSON.stringify. After each slice's items,
 * onSlice is awaited (the manager assigns new devices while the rest is read). Resolves false, reading
 * no further, where the text is not such an array: the caller reads it whole
 * then (YAML, or an error naming line:column).
 */
export async function eachJsonItem(path: string, onItem: OnItem, onSlice?: () => Promise<void> | void): Promise<boolean> {
  let depth = 0; // brackets open: 1 between the array's items
  let inString = false;
  let start = -1; // where the current item began in `text` (0: in an earlier slice); -1 between items
  let spaced = false; // whitespace seen in the current item outside its strings (over slices too)
  let afterComma = false; // an item must follow (JSON has no trailing comma)
  let done = false;
  let carry = ''; // the text in earlier slices of the first item that ends in this one
  // per item ending in a slice: its start and end in `text`, and `spaced`
  const starts: number[] = [];
  const ends: number[] = [];
  const spacings: boolean[] = [];
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: CHUNK })) {
    // each slice scanned as it is (not joined to the carry: a joined string is slower to read a character at a time)
    const text = chunk as string;
    if (start >= 0) start = 0;
    let count = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        // most of the text is in strings: to the next quote not escaped (after an even run of backslashes)
        const quote = text.indexOf('"', i);
        if (quote < 0) break;
        let before = quote - 1;
        while (before >= 0 && text.charCodeAt(before) === BACKSLASH) before--;
        let backslashes = quote - 1 - before;
        if (before < 0) for (let k = carry.length - 1; k >= 0 && carry.charCodeAt(k) === BACKSLASH; k--) backslashes++;
        if (backslashes % 2 === 0) inString = false;
        i = quote;
        continue;
      }
      if (done || depth === 0) {
        if (!done && c === OPEN_LIST) depth = 1;
        else if (!isSpace(c)) return false;
        continue;
      }
      if (start < 0) {
        if (isSpace(c)) continue;
        // an item ends at the comma or bracket after it: one here has no item before it ('[,', ',,', ',]')
        if (c === COMMA) return false;
        if (c === CLOSE_LIST) {
          if (afterComma) return false;
          done = true;
          continue;
        }
        start = i;
        spaced = false;
      }
      if (c === QUOTE) inString = true;
      else if (c === OPEN_LIST || c === OPEN_OBJECT) depth++;
      else if ((c === COMMA && depth === 1) || ((c === CLOSE_LIST || c === CLOSE_OBJECT) && --depth === 0)) {
        if (depth === 0 && c !== CLOSE_LIST) return false;
        starts[count] = start;
        ends[count] = i;
        spacings[count] = spaced;
        count++;
        start = -1;
        afterComma = c === COMMA;
        done = depth === 0;
      } else if (isSpace(c)) spaced = true;
    }
    if (count) {
      // the items that end in this slice parsed at once, with the commas between them: one JSON.parse a slice, not an item
      const from = starts[0]!;
      const shift = carry.length - from + 1; // from `text` to `joined`
      const joined = `[${carry}${text.slice(from, ends[count - 1])}]`;
      let items: unknown;
      try {
        items = JSON.parse(joined);
      } catch {
        return false;
      }
      if (!Array.isArray(items) || items.length !== count) return false;
      onItem(items[0], joined, 1, ends[0]! + shift, spacings[0]!);
      for (let k = 1; k < count; k++) onItem(items[k], joined, starts[k]! + shift, ends[k]! + shift, spacings[k]!);
      carry = '';
      await onSlice?.();
    }
    if (start >= 0) carry += text.slice(start); // `spaced` goes on with the item
  }
  return done;
}

/**
 * JSON or YAML text, with line:column in errors. JSON goes through JSON.parse
 * (the YAML parser reads it too, but 70× slower on a 10,000-device list).
 */
export function parseText(text: string, where: string): unknown {
  if (/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // YAML flow style, or broken JSON: the YAML parser says where
    }
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    throw new DeviceListError(`${where}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: ${error.message.split(' at line ')[0]!.split('\n')[0]}`, {
      code: 'COORD_ERR_OBNIZ_DEVICE_LIST_PARSE',
    });
  }
  return doc.toJS();
}
