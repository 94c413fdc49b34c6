// SCAN for the embedded backend. ioredis-mock pages by position in its live key
// list, so keys added or removed between pages shift the rest (some are skipped,
// some repeated). Here cursor 0 takes a snapshot of the key names and later pages
// walk that snapshot, dropping keys deleted since: every key that exists for the
// whole scan is returned exactly once.
import { ReplyError } from '../../core/backend.ts';
import type { CommandImpl } from './command.ts';
import type { Dataset } from './dataset.ts';
import { globToRegExp } from './glob.ts';
import { integerArg, syntaxError } from './reply-error.ts';
import { typeOf } from './type-check.ts';

interface Cursor {
  keys: string[];
  next: number;
}

/** Open cursors per dataset. A client that stops scanning leaves one behind; the oldest go first. */
const cursors = new WeakMap<Dataset, { open: Map<string, Cursor>; counter: number }>();
const MAX_OPEN = 1000;

const scan: CommandImpl = ({ ds }, args) => {
  const [cursorText, ...options] = args;
  if (cursorText === undefined || !/^\d+$/.test(cursorText)) throw new ReplyError('ERR invalid cursor');
  let match: RegExp | undefined;
  let count = 10;
  let type: string | undefined;
  for (let i = 0; i < options.length; i += 2) {
    const value = options[i + 1];
    if (value === undefined) throw syntaxError();
    switch (options[i]!.toUpperCase()) {
      case 'MATCH':
        match = globToRegExp(value);
        break;
      case 'COUNT':
        count = integerArg(value);
        if (count < 1) throw syntaxError();
        break;
      case 'TYPE':
        type = value.toLowerCase();
        break;
      default:
        throw syntaxError();
    }
  }
  let state = cursors.get(ds);
  if (!state) cursors.set(ds, (state = { open: new Map(), counter: 0 }));
  let cursor: Cursor | undefined;
  if (cursorText === '0') cursor = { keys: ds.mock.data.keys(), next: 0 };
  else {
    cursor = state.open.get(cursorText);
    state.open.delete(cursorText);
    if (!cursor) return ['0', []]; // unknown or abandoned cursor: the scan is over
  }
  const page = cursor.keys.slice(cursor.next, cursor.next + count);
  cursor.next += page.length;
  const keys = page.filter((key) => {
    if (!ds.mock.data.has(key)) return false; // deleted or expired since the snapshot
    if (match && !match.test(key)) return false;
    return type === undefined || typeOf(ds.mock.data.get(key)) === type;
  });
  if (cursor.next >= cursor.keys.length) return ['0', keys];
  const id = String(++state.counter);
  state.open.set(id, cursor);
  if (state.open.size > MAX_OPEN) state.open.delete(state.open.keys().next().value!);
  return [id, keys];
};

export const scanCommands: Record<string, CommandImpl> = { scan };
