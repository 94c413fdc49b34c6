// The embedded backend's command engine: one synchronous entry point per dataset.
// Commands ioredis-mock lacks or gets wrong are implemented in this folder; the
// rest run on its emulators after the type checks Redis makes. Everything runs
// synchronously, so a MULTI block or a script is atomic, as on Redis.
import { Buffer } from 'node:buffer';
import { ReplyError, type Reply } from '../../core/backend.ts';
import { blockingCall, blockingCommands, waitQueue } from './blocking.ts';
import type { CommandContext, CommandImpl } from './command.ts';
import type { Dataset } from './dataset.ts';
import { expireCommands } from './expire.ts';
import { mockCommands } from './mock-commands.ts';
import { normaliseOptionCase } from './option-case.ts';
import { toReplyError } from './reply-error.ts';
import { scanCommands } from './scan.ts';
import { scriptCommands } from './scripting.ts';
import { streamGroupCommands } from './stream-groups.ts';
import { streamCommands } from './streams.ts';
import { zsetRangeCommands } from './zset-ranges.ts';
import { checkKeyTypes, checkNumbers, dropEmptyKeys, typeOf } from './type-check.ts';

const own: Record<string, CommandImpl> = {
  ...streamCommands,
  ...streamGroupCommands,
  ...scriptCommands,
  ...scanCommands,
  ...blockingCommands,
  ...expireCommands,
  ...zsetRangeCommands,
  type: ({ ds }, [key]) => typeOf(ds.mock.data.get(key!)),
  // Redis answers nil for a key that holds no string; ioredis-mock returns the value whatever it is.
  mget: ({ ds }, keys) => {
    if (keys.length === 0) throw new ReplyError("ERR wrong number of arguments for 'mget' command");
    return keys.map((key) => {
      const value = ds.mock.data.get(key);
      return typeof value === 'string' ? value : null;
    });
  },
};

/** Redis refuses these inside scripts. */
const NOT_FROM_SCRIPTS = new Set([
  'eval', 'eval_ro', 'evalsha', 'evalsha_ro', 'script', 'multi', 'exec', 'discard', 'watch', 'unwatch', 'subscribe', 'psubscribe',
  'unsubscribe', 'punsubscribe', 'quit', 'blpop', 'brpop', 'blmove', 'brpoplpush', 'bzpopmin', 'bzpopmax',
]);

/** Connection-state commands: the Backend interface has subscriber() and multi() for them. */
const CONNECTION_STATE = new Set(['subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe', 'multi', 'exec', 'discard', 'watch', 'unwatch', 'quit']);

/** ioredis-mock gives these scores as numbers; Redis sends them as bulk strings. */
const SCORES_AS_STRINGS = new Set(['zpopmin', 'zpopmax', 'zmscore']);

export interface Engine {
  /** Runs one command synchronously; blocking commands are tried once. Throws ReplyError. */
  exec(args: readonly string[], fromScript?: boolean): Reply;
  /** Runs one command; a blocking one waits (until `signal` aborts it). Rejects with ReplyError. */
  run(args: readonly string[], signal: AbortSignal): Promise<Reply>;
  /** Whether the command exists here (MULTI checks every command before running any). */
  knows(name: string): boolean;
}

const engines = new WeakMap<Dataset, Engine>();

export function engine(ds: Dataset): Engine {
  let found = engines.get(ds);
  if (!found) engines.set(ds, (found = createEngine(ds)));
  return found;
}

function createEngine(ds: Dataset): Engine {
  const emulators = mockCommands(ds.mock);
  const knows = (name: string) => Object.hasOwn(own, name) || emulators.has(name);

  const exec = (args: readonly string[], fromScript = false): Reply => {
    const name = args[0]?.toLowerCase();
    if (name === undefined) throw new ReplyError('ERR empty command');
    if (fromScript && NOT_FROM_SCRIPTS.has(name)) throw new ReplyError('ERR This Redis command is not allowed from script');
    if (!fromScript && CONNECTION_STATE.has(name)) {
      throw new ReplyError(`ERR ${name.toUpperCase()} is not sent as a command here: use the backend's subscriber() or multi()`);
    }
    const implementation = Object.hasOwn(own, name) ? own[name] : undefined;
    if (implementation) {
      try {
        return implementation(ctx, args.slice(1));
      } catch (error) {
        throw toReplyError(error);
      }
    }
    const emulator = emulators.get(name);
    if (!emulator) {
      if (fromScript) throw new ReplyError('ERR Unknown Redis command called from script');
      throw new ReplyError(`ERR unknown command '${args[0]}' (the embedded backend does not implement it)`);
    }
    const rest = normaliseOptionCase(name, args.slice(1));
    checkKeyTypes(ds, name, rest);
    checkNumbers(ds, name, rest);
    let result: unknown;
    try {
      result = emulator.apply(ds.mock, [...rest]);
    } catch (error) {
      throw toReplyError(error);
    }
    dropEmptyKeys(ds, name, rest);
    const reply = toReply(result);
    return SCORES_AS_STRINGS.has(name) && Array.isArray(reply) ? reply.map((r) => (typeof r === 'number' ? String(r) : r)) : reply;
  };

  const ctx: CommandContext = { ds, exec };

  return {
    exec,
    knows,
    async run(args, signal) {
      const call = blockingCall(ctx, args);
      return call ? waitQueue(ds).wait(call, signal) : exec(args);
    },
  };
}

/** An emulator's result as a RESP2-shaped reply. Objects are hashes (HGETALL): field, value, … */
function toReply(value: unknown): Reply {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (Buffer.isBuffer(value)) return value.toString();
  if (Array.isArray(value)) return value.map(toReply);
  if (typeof value === 'object' && typeof (value as PromiseLike<unknown>).then !== 'function') {
    return Object.entries(value).flatMap(([k, v]) => [k, toReply(v)]);
  }
  throw new ReplyError('ERR the embedded backend cannot run this command synchronously');
}
