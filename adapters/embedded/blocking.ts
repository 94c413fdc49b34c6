// Blocking commands for the embedded backend (ioredis-mock rejects BLPOP, BRPOP,
// BLMOVE and BZPOPMIN, and polls XREAD BLOCK every 100 ms). Each one is its
// non-blocking form tried once; when that finds nothing, the call waits in a FIFO
// queue and is tried again right after a write touches one of its keys (the
// dataset's "modified" signal), until it gets a reply or its timeout passes.
// Inside MULTI a blocking command is tried once, as Redis does.
import type { EventEmitter } from 'node:events';
import { ConnectionError, ReplyError, type Reply } from '../../core/backend.ts';
import type { CommandContext, CommandImpl } from './command.ts';
import type { Dataset } from './dataset.ts';
import { syntaxError, wrongArity } from './reply-error.ts';
import { parseXreadgroup, readGroup } from './stream-groups.ts';
import { parseXread, readStreams } from './streams.ts';

export interface BlockingCall {
  keys: readonly string[];
  /** 0 waits for ever. */
  timeoutMs: number;
  /** The non-blocking form: a reply, or null when there is nothing yet. */
  attempt(): Reply;
}

/** A timeout in seconds (fractions allowed), as BLPOP and friends take it. */
function seconds(text: string | undefined): number {
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(value)) throw new ReplyError('ERR timeout is not a float or out of range');
  if (value < 0) throw new ReplyError('ERR timeout is negative');
  return Math.round(value * 1000);
}

/** Pops from the first of `keys` that has something: [key, …popped]. */
function firstOf(ctx: CommandContext, keys: readonly string[], pop: string): Reply {
  for (const key of keys) {
    const reply = ctx.exec([pop, key]);
    if (Array.isArray(reply) ? reply.length > 0 : reply !== null) return [key, ...(Array.isArray(reply) ? reply : [reply])];
  }
  return null;
}

type Parser = (ctx: CommandContext, args: readonly string[]) => BlockingCall | undefined;

const multiKeyPop = (name: string, pop: string): Parser => (ctx, args) => {
  if (args.length < 2) throw wrongArity(name);
  const keys = args.slice(0, -1);
  return { keys, timeoutMs: seconds(args[args.length - 1]), attempt: () => firstOf(ctx, keys, pop) };
};

const parsers: Record<string, Parser> = {
  blpop: multiKeyPop('blpop', 'LPOP'),
  brpop: multiKeyPop('brpop', 'RPOP'),
  bzpopmin: multiKeyPop('bzpopmin', 'ZPOPMIN'),
  bzpopmax: multiKeyPop('bzpopmax', 'ZPOPMAX'),
  blmove: (ctx, args) => {
    if (args.length !== 5) throw wrongArity('blmove');
    const [src, dst, from, to, timeout] = args as [string, string, string, string, string];
    return { keys: [src], timeoutMs: seconds(timeout), attempt: () => ctx.exec(['LMOVE', src, dst, from, to]) };
  },
  brpoplpush: (ctx, args) => {
    if (args.length !== 3) throw wrongArity('brpoplpush');
    const [src, dst, timeout] = args as [string, string, string];
    return { keys: [src], timeoutMs: seconds(timeout), attempt: () => ctx.exec(['RPOPLPUSH', src, dst]) };
  },
  xread: (ctx, args) => {
    const spec = parseXread(ctx, args);
    if (spec.blockMs === undefined) return undefined;
    return { keys: spec.streams.map(([key]) => key), timeoutMs: spec.blockMs, attempt: () => readStreams(ctx, spec) };
  },
  xreadgroup: (ctx, args) => {
    const spec = parseXreadgroup(ctx, args);
    if (spec.blockMs === undefined) return undefined;
    return { keys: spec.streams.map(([key]) => key), timeoutMs: spec.blockMs, attempt: () => readGroup(ctx, spec) };
  },
};

/** The blocking call `args` asks for, or undefined when it is not one (e.g. XREAD without BLOCK). */
export function blockingCall(ctx: CommandContext, args: readonly string[]): BlockingCall | undefined {
  const name = args[0]?.toLowerCase() ?? '';
  return Object.hasOwn(parsers, name) ? parsers[name]!(ctx, args.slice(1)) : undefined;
}

/** The blocking commands run once, without waiting (MULTI). XREAD/XREADGROUP stay in their own modules. */
export const blockingCommands: Record<string, CommandImpl> = Object.fromEntries(
  ['blpop', 'brpop', 'bzpopmin', 'bzpopmax', 'blmove', 'brpoplpush'].map((name) => [
    name,
    (ctx: CommandContext, args: readonly string[]) => {
      const call = parsers[name]!(ctx, args);
      if (!call) throw syntaxError();
      return call.attempt();
    },
  ]),
);

interface Waiter {
  call: BlockingCall;
  settle(reply: Reply | Error): void;
}

/** Blocked calls of one dataset, served first come first served. */
class WaitQueue {
  private readonly waiting: Waiter[] = [];
  private touched = new Set<string>();
  private scheduled = false;

  constructor(modified: EventEmitter) {
    modified.on('modified', (key: string) => this.touch(key));
  }

  wait(call: BlockingCall, signal: AbortSignal): Promise<Reply> {
    const first = call.attempt();
    if (first !== null) return Promise.resolve(first);
    if (signal.aborted) return Promise.reject(new ConnectionError('the connection is closed'));
    return new Promise<Reply>((resolve, reject) => {
      // An armed timer also keeps the process alive while it waits, as an open socket would.
      const limit = call.timeoutMs === 0 ? 2 ** 31 - 1 : call.timeoutMs;
      const arm = (): ReturnType<typeof setTimeout> => setTimeout(() => (call.timeoutMs === 0 ? (timer = arm()) : waiter.settle(null)), limit);
      let timer = arm();
      const onAbort = () => waiter.settle(new ConnectionError('the connection was closed while a blocking call waited'));
      const waiter: Waiter = {
        call,
        settle: (reply) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          const at = this.waiting.indexOf(waiter);
          if (at !== -1) this.waiting.splice(at, 1);
          if (reply instanceof Error) reject(reply);
          else resolve(reply);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private touch(key: string): void {
    if (this.waiting.length === 0) return;
    this.touched.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    // After the current command, MULTI or script has finished, as Redis serves blocked clients.
    queueMicrotask(() => this.serve());
  }

  private serve(): void {
    this.scheduled = false;
    const touched = this.touched;
    this.touched = new Set();
    for (const waiter of [...this.waiting]) {
      if (!waiter.call.keys.some((key) => touched.has(key))) continue;
      try {
        const reply = waiter.call.attempt();
        if (reply !== null) waiter.settle(reply);
      } catch (error) {
        waiter.settle(error as Error);
      }
    }
  }
}

const queues = new WeakMap<Dataset, WaitQueue>();

export function waitQueue(ds: Dataset): WaitQueue {
  let queue = queues.get(ds);
  if (!queue) queues.set(ds, (queue = new WaitQueue(ds.modified)));
  return queue;
}
