// ioredis-mock does not answer WRONGTYPE (HGET on a string returns null, LPUSH on a
// string throws a message of its own), nor reject INCR of a non-number. These checks
// run before its emulators so the embedded backend fails where Redis fails.
import { Buffer } from 'node:buffer';
import type { Dataset } from './dataset.ts';
import { isStream } from './stream-store.ts';
import { notInteger, wrongType } from './reply-error.ts';
import { ReplyError } from '../../core/backend.ts';

export type KeyType = 'string' | 'list' | 'set' | 'zset' | 'hash' | 'stream';

/** The Redis type of a stored value, as TYPE names it. */
export function typeOf(value: unknown): KeyType | 'none' {
  if (value === undefined || value === null) return 'none';
  if (typeof value === 'string' || Buffer.isBuffer(value)) return 'string';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Set) return 'set';
  if (value instanceof Map) return 'zset';
  if (isStream(value)) return 'stream';
  return 'hash';
}

/** Which arguments are keys: the first, the first two, all, or all but the first (…STORE destination). */
type KeyArgs = 'first' | 'two' | 'all' | 'rest';

const commandsByType: Record<Exclude<KeyType, 'stream'>, Record<string, KeyArgs>> = {
  string: Object.fromEntries(
    ['get', 'getdel', 'getex', 'getrange', 'getset', 'setrange', 'append', 'strlen', 'substr', 'getbit', 'setbit', 'bitcount',
      'incr', 'incrby', 'incrbyfloat', 'decr', 'decrby'].map((c) => [c, 'first' as const]),
  ),
  hash: Object.fromEntries(
    ['hset', 'hsetnx', 'hmset', 'hget', 'hmget', 'hgetall', 'hdel', 'hexists', 'hincrby', 'hincrbyfloat', 'hkeys', 'hvals', 'hlen',
      'hstrlen', 'hscan', 'hrandfield'].map((c) => [c, 'first' as const]),
  ),
  list: {
    ...Object.fromEntries(
      ['lpush', 'rpush', 'lpushx', 'rpushx', 'lpop', 'rpop', 'lrange', 'llen', 'lrem', 'lindex', 'lset', 'ltrim', 'linsert', 'lpos']
        .map((c) => [c, 'first' as const]),
    ),
    lmove: 'two',
    rpoplpush: 'two',
  },
  set: {
    ...Object.fromEntries(
      ['sadd', 'srem', 'smembers', 'sismember', 'smismember', 'scard', 'spop', 'srandmember', 'sscan'].map((c) => [c, 'first' as const]),
    ),
    smove: 'two',
    sinter: 'all',
    sunion: 'all',
    sdiff: 'all',
    sinterstore: 'rest',
    sunionstore: 'rest',
    sdiffstore: 'rest',
  },
  zset: Object.fromEntries(
    ['zadd', 'zcard', 'zcount', 'zincrby', 'zrange', 'zrangebyscore', 'zrangebylex', 'zrevrange', 'zrevrangebyscore',
      'zrevrangebylex', 'zrank', 'zrevrank', 'zrem', 'zremrangebyrank', 'zremrangebyscore', 'zscore', 'zmscore', 'zpopmin',
      'zpopmax', 'zscan'].map((c) => [c, 'first' as const]),
  ),
};

const expected = new Map<string, [KeyType, KeyArgs]>();
for (const [type, commands] of Object.entries(commandsByType)) {
  for (const [command, keys] of Object.entries(commands)) expected.set(command, [type as KeyType, keys]);
}

function keyArgs(args: readonly string[], which: KeyArgs): readonly string[] {
  switch (which) {
    case 'first':
      return args.slice(0, 1);
    case 'two':
      return args.slice(0, 2);
    case 'all':
      return args;
    case 'rest':
      return args.slice(1);
  }
}

/** The keys a list, set, sorted set, hash or string command touches. */
export function keysOf(command: string, args: readonly string[]): readonly string[] {
  const rule = expected.get(command);
  return rule ? keyArgs(args, rule[1]) : [];
}

/** Throws WRONGTYPE when a key the command reads or writes holds another type. */
export function checkKeyTypes(ds: Dataset, command: string, args: readonly string[]): void {
  const rule = expected.get(command);
  if (!rule) return;
  if (rule[1] === 'first') {
    const type = typeOf(ds.mock.data.get(args[0]!));
    if (type !== 'none' && type !== rule[0]) throw wrongType();
    return;
  }
  for (const key of keyArgs(args, rule[1])) {
    const type = typeOf(ds.mock.data.get(key));
    if (type !== 'none' && type !== rule[0]) throw wrongType();
  }
}

/**
 * Redis deletes a list, set or sorted set once it is empty; ioredis-mock leaves
 * some behind (an SPOP'd set…). Run after each command. A hash empties only by
 * HDEL, which ioredis-mock's already deletes; checking a hash here would list its
 * fields on every command (there is no O(1) emptiness test for an object).
 */
export function dropEmptyKeys(ds: Dataset, command: string, args: readonly string[]): void {
  const rule = expected.get(command);
  if (!rule || rule[0] === 'hash' || rule[0] === 'string') return;
  for (const key of keyArgs(args, rule[1])) {
    const value = ds.mock.data.get(key);
    const empty = value instanceof Set || value instanceof Map ? value.size === 0 : Array.isArray(value) && value.length === 0;
    if (empty) ds.mock.data.delete(key);
  }
}

/** The commands checkNumbers checks. */
const NUMERIC = new Set(['incr', 'decr', 'incrby', 'decrby', 'incrbyfloat', 'hincrby', 'hincrbyfloat', 'zincrby', 'setex', 'psetex']);
const INTEGER = /^-?\d+$/;
const FLOAT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?inf$/i;

/** Throws what Redis throws when a counter or its increment is not a number. */
export function checkNumbers(ds: Dataset, command: string, args: readonly string[]): void {
  if (!NUMERIC.has(command)) return;
  const current = () => ds.mock.data.get(args[0]!);
  const field = () => (ds.mock.data.get(args[0]!) as Record<string, string> | undefined)?.[args[1]!];
  const integers = (...values: unknown[]) => {
    for (const v of values) if (v !== undefined && !(typeof v === 'string' && INTEGER.test(v) && Number.isSafeInteger(Number(v)))) throw notInteger();
  };
  const floats = (...values: unknown[]) => {
    for (const v of values) if (v !== undefined && !(typeof v === 'string' && FLOAT.test(v))) throw new ReplyError('ERR value is not a valid float');
  };
  switch (command) {
    case 'incr':
    case 'decr':
      return integers(current());
    case 'incrby':
    case 'decrby':
      return integers(current(), args[1]);
    case 'incrbyfloat':
      return floats(current(), args[1]);
    case 'hincrby':
      if (field() !== undefined && !INTEGER.test(field()!)) throw new ReplyError('ERR hash value is not an integer');
      return integers(args[2]);
    case 'hincrbyfloat':
      return floats(field(), args[2]);
    case 'zincrby':
      return floats(args[1]);
    case 'setex':
    case 'psetex':
      return integers(args[1]);
  }
}
