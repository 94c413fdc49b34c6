// ZADD and the sorted-set reads that take a range (ZRANGE in all its forms, ZREVRANGE,
// ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZCOUNT, ZRANK,
// ZREVRANK) on SortedSetMap's kept order: O(log n + what they return). ioredis-mock
// sorted the whole set on each read, read score bounds with parseInt, and took
// "+inf" as a score of NaN and GT / LT as members.
import { ReplyError, type Reply } from '../../core/backend.ts';
import type { CommandImpl } from './command.ts';
import type { Dataset } from './dataset.ts';
import { integerArg, syntaxError, wrongArity, wrongType } from './reply-error.ts';
import { SortedSetMap, type ZEntry } from './sorted-set.ts';
import { typeOf } from './type-check.ts';

/** The sorted set at `key`; undefined when there is none; WRONGTYPE for another type. */
export function readSortedSet(ds: Dataset, key: string): SortedSetMap | undefined {
  const value = ds.mock.data.get(key);
  if (value === undefined) return undefined;
  if (typeOf(value) !== 'zset') throw wrongType();
  return value instanceof SortedSetMap ? value : SortedSetMap.from(value as Map<string, ZEntry>);
}

/** A score as Redis prints it. */
export function formatScore(score: number): string {
  if (score === Infinity) return 'inf';
  if (score === -Infinity) return '-inf';
  return String(score);
}

interface ScoreBound {
  value: number;
  exclusive: boolean;
}

function scoreBound(text: string): ScoreBound {
  const exclusive = text.startsWith('(');
  const body = exclusive ? text.slice(1) : text;
  const lower = body.toLowerCase();
  const value = lower === '-inf' ? -Infinity : lower === '+inf' || lower === 'inf' ? Infinity : body.trim() === body && body !== '' ? Number(body) : NaN;
  if (Number.isNaN(value)) throw new ReplyError('ERR min or max is not a float');
  return { value, exclusive };
}

interface LexBound {
  value: string;
  exclusive: boolean;
  /** '-' (below every member) or '+' (above every member). */
  infinite?: '-' | '+';
}

function lexBound(text: string): LexBound {
  if (text === '-' || text === '+') return { value: '', exclusive: false, infinite: text };
  if (text.startsWith('(') || text.startsWith('[')) return { value: text.slice(1), exclusive: text.startsWith('(') };
  throw new ReplyError('ERR min or max not valid string range item');
}

const aboveMin = (min: LexBound, value: string) =>
  min.infinite === '-' || (min.infinite !== '+' && (min.exclusive ? value > min.value : value >= min.value));
const belowMax = (max: LexBound, value: string) =>
  max.infinite === '+' || (max.infinite !== '-' && (max.exclusive ? value < max.value : value <= max.value));

type By = 'rank' | 'score' | 'lex';

interface RangeQuery {
  key: string;
  /** As given: for a reversed score or lex range, the first is the upper bound. */
  start: string;
  stop: string;
  by: By;
  reverse: boolean;
  limit?: { offset: number; count: number };
  withScores: boolean;
}

/** The entries a range query selects, in reply order. */
function select(set: SortedSetMap, q: RangeQuery): ZEntry[] {
  const order = set.order;
  let from: number;
  let to: number; // exclusive
  if (q.by === 'rank') {
    const length = order.length;
    let start = integerArg(q.start);
    let stop = integerArg(q.stop);
    if (start < 0) start += length;
    if (stop < 0) stop += length;
    if (start < 0) start = 0;
    if (start > stop || start >= length) return [];
    if (stop >= length) stop = length - 1;
    if (q.reverse) [from, to] = [length - 1 - stop, length - start];
    else [from, to] = [start, stop + 1];
  } else if (q.by === 'score') {
    const min = scoreBound(q.reverse ? q.stop : q.start);
    const max = scoreBound(q.reverse ? q.start : q.stop);
    from = set.firstAtOrAfter((e) => (min.exclusive ? e.score > min.value : e.score >= min.value));
    to = set.firstAtOrAfter((e) => (max.exclusive ? e.score >= max.value : e.score > max.value));
  } else {
    const min = lexBound(q.reverse ? q.stop : q.start);
    const max = lexBound(q.reverse ? q.start : q.stop);
    // Members compare by name only when they share one score (as Redis requires for BYLEX), so filter in order.
    const picked = order.filter((e) => aboveMin(min, e.value) && belowMax(max, e.value));
    return window(q.reverse ? picked.reverse() : picked, q.limit);
  }
  if (from >= to) return [];
  if (!q.limit) {
    const slice = order.slice(from, to);
    return q.reverse ? slice.reverse() : slice;
  }
  const { offset, count } = q.limit;
  if (offset < 0) return [];
  const take = count < 0 ? to - from : Math.min(count, to - from);
  const out: ZEntry[] = [];
  if (q.reverse) for (let i = to - 1 - offset; i >= from && out.length < take; i--) out.push(order[i]!);
  else for (let i = from + offset; i < to && out.length < take; i++) out.push(order[i]!);
  return out;
}

function window(entries: ZEntry[], limit: RangeQuery['limit']): ZEntry[] {
  if (!limit) return entries;
  if (limit.offset < 0) return [];
  return entries.slice(limit.offset, limit.count < 0 ? undefined : limit.offset + limit.count);
}

function reply(entries: readonly ZEntry[], withScores: boolean): Reply[] {
  if (!withScores) return entries.map((e) => e.value);
  const out: Reply[] = [];
  for (const e of entries) out.push(e.value, formatScore(e.score));
  return out;
}

function runRange(ds: Dataset, q: RangeQuery): Reply {
  if (q.limit && q.by === 'rank') {
    throw new ReplyError('ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX');
  }
  if (q.withScores && q.by === 'lex') throw new ReplyError('ERR syntax error, WITHSCORES not supported in combination with BYLEX');
  const set = readSortedSet(ds, q.key);
  if (!set) {
    // Redis still checks the bounds of an empty key.
    if (q.by === 'score') [q.start, q.stop].forEach(scoreBound);
    else if (q.by === 'lex') [q.start, q.stop].forEach(lexBound);
    else [q.start, q.stop].forEach((n) => integerArg(n));
    return [];
  }
  return reply(select(set, q), q.withScores);
}

/** Reads the options after `key start stop`; `allowed` names the words this command takes. */
function options(name: string, args: readonly string[], base: Omit<RangeQuery, 'key' | 'start' | 'stop'>, allowed: ReadonlySet<string>): RangeQuery {
  if (args.length < 3) throw wrongArity(name);
  const q: RangeQuery = { key: args[0]!, start: args[1]!, stop: args[2]!, by: base.by, reverse: base.reverse, withScores: base.withScores };
  for (let i = 3; i < args.length; i++) {
    const word = args[i]!.toUpperCase();
    if (!allowed.has(word)) throw syntaxError();
    if (word === 'WITHSCORES') q.withScores = true;
    else if (word === 'REV') q.reverse = true;
    else if (word === 'BYSCORE') q.by = 'score';
    else if (word === 'BYLEX') q.by = 'lex';
    else if (word === 'LIMIT') {
      if (i + 2 >= args.length) throw syntaxError();
      q.limit = { offset: integerArg(args[i + 1]), count: integerArg(args[i + 2]) };
      i += 2;
    }
  }
  return q;
}

const rangeCommand = (name: string, base: Omit<RangeQuery, 'key' | 'start' | 'stop'>, words: readonly string[]): CommandImpl => {
  const allowed = new Set(words);
  return ({ ds }, args) => runRange(ds, options(name, args, base, allowed));
};

const plain = { by: 'rank', reverse: false, withScores: false } as const;

const rank = (reverse: boolean): CommandImpl => ({ ds }, args) => {
  const [key, member] = args;
  if (key === undefined || member === undefined || args.length > 2) throw wrongArity(reverse ? 'zrevrank' : 'zrank');
  const set = readSortedSet(ds, key);
  const entry = set?.get(member);
  if (!set || !entry) return null;
  const index = set.indexOf(entry);
  return reverse ? set.size - 1 - index : index;
};

const zcount: CommandImpl = ({ ds }, args) => {
  const [key, minText, maxText] = args;
  if (key === undefined || minText === undefined || maxText === undefined || args.length > 3) throw wrongArity('zcount');
  const min = scoreBound(minText);
  const max = scoreBound(maxText);
  const set = readSortedSet(ds, key);
  if (!set) return 0;
  const from = set.firstAtOrAfter((e) => (min.exclusive ? e.score > min.value : e.score >= min.value));
  const to = set.firstAtOrAfter((e) => (max.exclusive ? e.score >= max.value : e.score > max.value));
  return Math.max(0, to - from);
};

/** A score argument (ZADD, ZINCRBY): a float, or ±inf. */
function scoreArg(text: string): number {
  const value = scoreBound(text);
  if (value.exclusive) throw new ReplyError('ERR value is not a valid float');
  return value.value;
}

const zadd: CommandImpl = ({ ds }, args) => {
  const key = args[0];
  if (key === undefined) throw wrongArity('zadd');
  let nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
  let i = 1;
  for (; i < args.length; i++) {
    const word = args[i]!.toUpperCase();
    if (word === 'NX') nx = true;
    else if (word === 'XX') xx = true;
    else if (word === 'GT') gt = true;
    else if (word === 'LT') lt = true;
    else if (word === 'CH') ch = true;
    else if (word === 'INCR') incr = true;
    else break;
  }
  const pairs = args.length - i;
  if (pairs === 0) throw wrongArity('zadd');
  if (pairs % 2 !== 0) throw syntaxError();
  if (nx && xx) throw new ReplyError('ERR XX and NX options at the same time are not compatible');
  if (Number(nx) + Number(gt) + Number(lt) > 1) throw new ReplyError('ERR GT, LT, and/or NX options at the same time are not compatible');
  if (incr && pairs > 2) throw new ReplyError('ERR INCR option supports a single increment-element pair');
  const scores: number[] = [];
  for (let j = i; j < args.length; j += 2) scores.push(scoreArg(args[j]!));
  const existing = readSortedSet(ds, key);
  if (!existing && xx) return incr ? null : 0;
  const set = existing ?? new SortedSetMap();
  let added = 0;
  let changed = 0;
  let last: number | null = null;
  for (let j = 0; j < scores.length; j++) {
    const value = args[i + j * 2 + 1]!;
    const old = set.get(value);
    let score = scores[j]!;
    if (old ? nx : xx) continue;
    if (incr && old) score += old.score;
    if (Number.isNaN(score)) throw new ReplyError('ERR resulting score is not a number (NaN)');
    if (old && ((gt && score <= old.score) || (lt && score >= old.score))) continue;
    last = score;
    if (old?.score === score) continue;
    set.set(value, { score, value });
    if (old) changed++;
    else added++;
  }
  if (set.size > 0) ds.mock.data.set(key, set); // stored back: signals the write (WATCH, blocked readers)
  if (incr) return last === null ? null : formatScore(last);
  return ch ? added + changed : added;
};

export const zsetRangeCommands: Record<string, CommandImpl> = {
  zadd,
  zrange: rangeCommand('zrange', plain, ['BYSCORE', 'BYLEX', 'REV', 'LIMIT', 'WITHSCORES']),
  zrevrange: rangeCommand('zrevrange', { ...plain, reverse: true }, ['WITHSCORES']),
  zrangebyscore: rangeCommand('zrangebyscore', { ...plain, by: 'score' }, ['LIMIT', 'WITHSCORES']),
  zrevrangebyscore: rangeCommand('zrevrangebyscore', { ...plain, by: 'score', reverse: true }, ['LIMIT', 'WITHSCORES']),
  zrangebylex: rangeCommand('zrangebylex', { ...plain, by: 'lex' }, ['LIMIT']),
  zrevrangebylex: rangeCommand('zrevrangebylex', { ...plain, by: 'lex', reverse: true }, ['LIMIT']),
  zcount,
  zrank: rank(false),
  zrevrank: rank(true),
};
