// Stream commands. ioredis-mock's own ones number ids by length, compare ids as
// integers, let XREAD hand each entry out only once, keep internal keys beside the
// stream and have no XTRIM/XDEL; these replace them on the store in stream-store.ts.
import type { Reply } from '../../core/backend.ts';
import { ReplyError } from '../../core/backend.ts';
import type { CommandContext, CommandImpl } from './command.ts';
import { integerArg, syntaxError, wrongArity } from './reply-error.ts';
import {
  MAX_SEQ, emptyStream, entryReply, firstAfter, formatId, parseId, readStream, writeStream, type StreamEntry, type StreamValue,
} from './stream-store.ts';

interface Trim {
  kind: 'MAXLEN' | 'MINID';
  maxLen: number;
  minId: bigint;
}

/** Reads `MAXLEN|MINID [=|~] threshold [LIMIT n]` at args[i]; returns the trim and the index after it. */
function parseTrim(args: readonly string[], i: number): [Trim | undefined, number] {
  const kind = args[i]?.toUpperCase();
  if (kind !== 'MAXLEN' && kind !== 'MINID') return [undefined, i];
  i++;
  if (args[i] === '=' || args[i] === '~') i++; // '~' may trim less; trimming exactly is allowed
  const threshold = args[i++];
  if (threshold === undefined) throw syntaxError();
  const trim: Trim = { kind, maxLen: 0, minId: 0n };
  if (kind === 'MAXLEN') {
    trim.maxLen = integerArg(threshold);
    if (trim.maxLen < 0) throw new ReplyError('ERR The MAXLEN argument must be >= 0.');
  } else trim.minId = parseId(threshold);
  if (args[i]?.toUpperCase() === 'LIMIT') i += 2;
  return [trim, i];
}

/** Drops the oldest entries in place (copying the stream on every XADD made each O(length)). */
function applyTrim(stream: StreamValue, trim: Trim): number {
  const excess = trim.kind === 'MAXLEN' ? stream.entries.length - trim.maxLen : firstAfter(stream.entries, trim.minId - 1n);
  if (excess <= 0) return 0;
  stream.entries.splice(0, excess);
  return excess;
}

function nextId(stream: StreamValue, text: string): bigint {
  const lastMs = stream.lastId >> 64n;
  const lastSeq = stream.lastId & MAX_SEQ;
  let id: bigint;
  if (text === '*') {
    const now = BigInt(Date.now());
    id = now > lastMs ? now << 64n : (lastMs << 64n) | (lastSeq + 1n);
  } else if (text.endsWith('-*')) {
    const ms = parseId(text.slice(0, -2)) >> 64n;
    id = ms === lastMs && stream.lastId !== 0n ? (ms << 64n) | (lastSeq + 1n) : ms << 64n;
  } else id = parseId(text);
  if (id === 0n) throw new ReplyError('ERR The ID specified in XADD must be greater than 0-0');
  if (id <= stream.lastId) throw new ReplyError('ERR The ID specified in XADD is equal or smaller than the target stream top item');
  return id;
}

const xadd: CommandImpl = ({ ds }, args) => {
  const key = args[0];
  if (key === undefined) throw wrongArity('xadd');
  let i = 1;
  let create = true;
  if (args[i]?.toUpperCase() === 'NOMKSTREAM') {
    create = false;
    i++;
  }
  const [trim, at] = parseTrim(args, i);
  const idText = args[at];
  const fields = args.slice(at + 1);
  if (idText === undefined || fields.length === 0 || fields.length % 2 !== 0) throw wrongArity('xadd');
  const existing = readStream(ds, key);
  if (!existing && !create) return null;
  const stream = existing ?? emptyStream();
  const id = nextId(stream, idText);
  stream.entries.push({ id, fields });
  stream.lastId = id;
  if (trim) applyTrim(stream, trim);
  writeStream(ds, key, stream);
  return formatId(id);
};

const xlen: CommandImpl = ({ ds }, [key]) => readStream(ds, key!)?.entries.length ?? 0;

/** A range bound: '-', '+', an id, or '(id' for an exclusive one. */
function bound(text: string, isEnd: boolean): bigint {
  if (text === '-') return 0n;
  if (text === '+') return (MAX_SEQ << 64n) | MAX_SEQ;
  if (text.startsWith('(')) return isEnd ? parseId(text.slice(1), 0n) - 1n : parseId(text.slice(1), MAX_SEQ) + 1n;
  return parseId(text, isEnd ? MAX_SEQ : 0n);
}

function range(ctx: CommandContext, args: readonly string[], reverse: boolean): Reply {
  const [key, first, second, countWord, countText] = args;
  if (key === undefined || first === undefined || second === undefined) throw wrongArity(reverse ? 'xrevrange' : 'xrange');
  if (countWord !== undefined && (countWord.toUpperCase() !== 'COUNT' || countText === undefined || args.length > 5)) throw syntaxError();
  const count = countText === undefined ? Infinity : Math.max(0, integerArg(countText));
  const [startText, endText] = reverse ? [second, first] : [first, second];
  const start = bound(startText, false);
  const end = bound(endText, true);
  const stream = readStream(ctx.ds, key);
  if (!stream) return [];
  // in id order, so the range is found by binary search and only what is returned is read
  const entries = stream.entries;
  const from = firstAfter(entries, start - 1n);
  const to = firstAfter(entries, end);
  const out: Reply[] = [];
  if (reverse) for (let i = to - 1; i >= from && out.length < count; i--) out.push(entryReply(entries[i]!));
  else for (let i = from; i < to && out.length < count; i++) out.push(entryReply(entries[i]!));
  return out;
}

export interface ReadSpec {
  count: number;
  /** BLOCK in ms, when given (0 = forever). */
  blockMs?: number;
  /** Stream keys with the id to read after ('$' already resolved to the stream's last id). */
  streams: [key: string, after: bigint][];
}

/** Parses `[COUNT n] [BLOCK ms] STREAMS key… id…` (XREAD), resolving '$' now. */
export function parseXread(ctx: CommandContext, args: readonly string[]): ReadSpec {
  const spec: ReadSpec = { count: Infinity, streams: [] };
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i]!.toUpperCase();
    if (word === 'STREAMS') break;
    if (word === 'COUNT') spec.count = Math.max(0, integerArg(args[++i])) || Infinity;
    else if (word === 'BLOCK') {
      spec.blockMs = integerArg(args[++i]);
      if (spec.blockMs < 0) throw new ReplyError('ERR timeout is negative');
    } else throw syntaxError();
  }
  const rest = args.slice(i + 1);
  if (i === args.length || rest.length === 0) throw syntaxError();
  if (rest.length % 2 !== 0) {
    throw new ReplyError("ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.");
  }
  const half = rest.length / 2;
  for (let k = 0; k < half; k++) {
    const key = rest[k]!;
    const idText = rest[half + k]!;
    spec.streams.push([key, idText === '$' ? (readStream(ctx.ds, key)?.lastId ?? 0n) : parseId(idText)]);
  }
  return spec;
}

/** The entries after each stream's id, or null when there are none at all. */
export function readStreams(ctx: CommandContext, spec: ReadSpec): Reply {
  const out: Reply[] = [];
  for (const [key, after] of spec.streams) {
    const all = readStream(ctx.ds, key)?.entries ?? [];
    const from = firstAfter(all, after);
    const entries: StreamEntry[] = all.slice(from, spec.count === Infinity ? undefined : from + spec.count);
    if (entries.length > 0) out.push([key, entries.map(entryReply)]);
  }
  return out.length > 0 ? out : null;
}

/** XREAD without waiting (inside MULTI or a script; the blocking form is in blocking.ts). */
const xread: CommandImpl = (ctx, args) => readStreams(ctx, parseXread(ctx, args));

const xtrim: CommandImpl = ({ ds }, args) => {
  const key = args[0];
  const [trim, next] = parseTrim(args, 1);
  if (key === undefined || !trim) throw syntaxError();
  if (next !== args.length) throw syntaxError();
  const stream = readStream(ds, key);
  if (!stream) return 0;
  const removed = applyTrim(stream, trim);
  if (removed > 0) writeStream(ds, key, stream);
  return removed;
};

const xdel: CommandImpl = ({ ds }, args) => {
  const [key, ...idTexts] = args;
  if (key === undefined || idTexts.length === 0) throw wrongArity('xdel');
  const ids = new Set(idTexts.map((t) => parseId(t)));
  const stream = readStream(ds, key);
  if (!stream) return 0;
  const before = stream.entries.length;
  stream.entries = stream.entries.filter((e) => !ids.has(e.id));
  const removed = before - stream.entries.length;
  if (removed > 0) writeStream(ds, key, stream);
  return removed;
};

export const streamCommands: Record<string, CommandImpl> = {
  xadd,
  xlen,
  xrange: (ctx, args) => range(ctx, args, false),
  xrevrange: (ctx, args) => range(ctx, args, true),
  xread,
  xtrim,
  xdel,
};
