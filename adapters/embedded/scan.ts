// SCAN, HSCAN and SSCAN for the embedded backend. ioredis-mock pages by position
// in its live key (field, member) list, so entries added or removed between pages
// shift the rest (some are skipped, some repeated): a script that moves what it
// scans out of a hash, page by page, missed half of it. Here cursor 0 takes a
// snapshot of the names and later pages walk that snapshot, dropping names deleted
// since: every one that exists for the whole scan is returned exactly once.
import { ReplyError } from '../../core/backend.ts';
import type { CommandImpl } from './command.ts';
import type { Dataset } from './dataset.ts';
import { globToRegExp } from './glob.ts';
import { integerArg, syntaxError, wrongType } from './reply-error.ts';
import { typeOf } from './type-check.ts';

interface Cursor {
  keys: string[];
  next: number;
}

/** Open cursors per dataset. A client that stops scanning leaves one behind; the oldest go first. */
const cursors = new WeakMap<Dataset, { open: Map<string, Cursor>; counter: number }>();
const MAX_OPEN = 1000;

/** SCAN's options after the cursor: MATCH pattern, COUNT n, and TYPE (SCAN only). */
function scanOptions(options: readonly string[], withType: boolean): { match?: RegExp; count: number; type?: string } {
  const out: { match?: RegExp; count: number; type?: string } = { count: 10 };
  for (let i = 0; i < options.length; i += 2) {
    const value = options[i + 1];
    if (value === undefined) throw syntaxError();
    const option = options[i]!.toUpperCase();
    if (option === 'MATCH') out.match = globToRegExp(value);
    else if (option === 'COUNT') {
      out.count = integerArg(value);
      if (out.count < 1) throw syntaxError();
    } else if (option === 'TYPE' && withType) out.type = value.toLowerCase();
    else throw syntaxError();
  }
  return out;
}

/** One page of a scan over `names()` (read at cursor 0): [next cursor, the names still `present` that pass `keep`]. */
function page(ds: Dataset, cursorText: string | undefined, count: number, names: () => string[], keep: (name: string) => boolean): [string, string[]] {
  if (cursorText === undefined || !/^\d+$/.test(cursorText)) throw new ReplyError('ERR invalid cursor');
  let state = cursors.get(ds);
  if (!state) cursors.set(ds, (state = { open: new Map(), counter: 0 }));
  let cursor: Cursor | undefined;
  if (cursorText === '0') cursor = { keys: names(), next: 0 };
  else {
    cursor = state.open.get(cursorText);
    state.open.delete(cursorText);
    if (!cursor) return ['0', []]; // unknown or abandoned cursor: the scan is over
  }
  const taken = cursor.keys.slice(cursor.next, cursor.next + count);
  cursor.next += taken.length;
  const kept = taken.filter(keep);
  if (cursor.next >= cursor.keys.length) return ['0', kept];
  const id = String(++state.counter);
  state.open.set(id, cursor);
  if (state.open.size > MAX_OPEN) state.open.delete(state.open.keys().next().value!);
  return [id, kept];
}

const scan: CommandImpl = ({ ds }, [cursorText, ...options]) => {
  const { match, count, type } = scanOptions(options, true);
  return page(ds, cursorText, count, () => ds.mock.data.keys(), (key) => {
    if (!ds.mock.data.has(key)) return false; // deleted or expired since the snapshot
    if (match && !match.test(key)) return false;
    return type === undefined || typeOf(ds.mock.data.get(key)) === type;
  });
};

/** The value at `key` when it is of `type` (undefined when missing); WRONGTYPE otherwise. */
function storedAs(ds: Dataset, key: string, type: 'hash' | 'set'): unknown {
  const value = ds.mock.data.get(key);
  if (value !== undefined && typeOf(value) !== type) throw wrongType();
  return value;
}

const hscan: CommandImpl = ({ ds }, [key, cursorText, ...options]) => {
  const { match, count } = scanOptions(options, false);
  const hash = () => storedAs(ds, key!, 'hash') as Record<string, string> | undefined;
  const [next, fields] = page(ds, cursorText, count, () => Object.keys(hash() ?? {}), (field) => {
    const now = hash();
    return !!now && Object.hasOwn(now, field) && (!match || match.test(field));
  });
  const now = hash() ?? {};
  return [next, fields.flatMap((field) => [field, String(now[field])])];
};

const sscan: CommandImpl = ({ ds }, [key, cursorText, ...options]) => {
  const { match, count } = scanOptions(options, false);
  const set = () => storedAs(ds, key!, 'set') as Set<string> | undefined;
  return page(ds, cursorText, count, () => [...(set() ?? [])], (member) => !!set()?.has(member) && (!match || match.test(member)));
};

export const scanCommands: Record<string, CommandImpl> = { scan, hscan, sscan };
