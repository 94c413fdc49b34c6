// Consumer groups (ioredis-mock has none): XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM.
// A group keeps its last delivered id, its pending entries and its consumers inside
// the stream value, so DEL or expiry of the stream removes them with it.
import type { Reply } from '../../core/backend.ts';
import { ReplyError } from '../../core/backend.ts';
import type { CommandContext, CommandImpl } from './command.ts';
import { integerArg, syntaxError, wrongArity } from './reply-error.ts';
import {
  MAX_SEQ, emptyStream, entryReply, firstAfter, formatId, parseId, readStream, writeStream, type Group, type StreamValue,
} from './stream-store.ts';

function noGroup(key: string, group: string, command?: string): ReplyError {
  const where = command ? ` in ${command} with GROUP option` : '';
  return new ReplyError(`NOGROUP No such key '${key}' or consumer group '${group}'${where}`);
}

function findGroup(ctx: CommandContext, key: string, name: string, command?: string): [StreamValue, Group] {
  const stream = readStream(ctx.ds, key);
  const group = stream?.groups.get(name);
  if (!stream || !group) throw noGroup(key, name, command);
  return [stream, group];
}

const xgroup: CommandImpl = (ctx, args) => {
  const [sub, key, name, arg, ...rest] = args;
  if (sub === undefined || key === undefined || name === undefined) throw wrongArity('xgroup');
  switch (sub.toUpperCase()) {
    case 'CREATE': {
      if (arg === undefined) throw wrongArity('xgroup');
      let stream = readStream(ctx.ds, key);
      if (!stream) {
        if (!rest.some((r) => r.toUpperCase() === 'MKSTREAM')) {
          throw new ReplyError('ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.');
        }
        stream = emptyStream();
      }
      if (stream.groups.has(name)) throw new ReplyError('BUSYGROUP Consumer Group name already exists');
      const lastDelivered = arg === '$' ? stream.lastId : parseId(arg);
      stream.groups.set(name, { lastDelivered, pending: new Map(), consumers: new Map() });
      writeStream(ctx.ds, key, stream);
      return 'OK';
    }
    case 'SETID': {
      const [stream, group] = findGroup(ctx, key, name);
      if (arg === undefined) throw wrongArity('xgroup');
      group.lastDelivered = arg === '$' ? stream.lastId : parseId(arg);
      writeStream(ctx.ds, key, stream);
      return 'OK';
    }
    case 'DESTROY': {
      const stream = readStream(ctx.ds, key);
      if (!stream?.groups.delete(name)) return 0;
      writeStream(ctx.ds, key, stream);
      return 1;
    }
    case 'CREATECONSUMER': {
      const [stream, group] = findGroup(ctx, key, name);
      if (arg === undefined) throw wrongArity('xgroup');
      if (group.consumers.has(arg)) return 0;
      group.consumers.set(arg, Date.now());
      writeStream(ctx.ds, key, stream);
      return 1;
    }
    case 'DELCONSUMER': {
      const [stream, group] = findGroup(ctx, key, name);
      if (arg === undefined) throw wrongArity('xgroup');
      let dropped = 0;
      for (const [id, p] of group.pending) if (p.consumer === arg && group.pending.delete(id)) dropped++;
      group.consumers.delete(arg);
      writeStream(ctx.ds, key, stream);
      return dropped;
    }
    default:
      throw new ReplyError(`ERR unknown subcommand '${sub}'. Try XGROUP HELP.`);
  }
};

export interface GroupReadSpec {
  group: string;
  consumer: string;
  count: number;
  blockMs?: number;
  noAck: boolean;
  /** Stream keys with '>' (new entries) or an id (the consumer's own pending entries after it). */
  streams: [key: string, id: string][];
}

/** Parses `GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key… id…` (XREADGROUP). */
export function parseXreadgroup(ctx: CommandContext, args: readonly string[]): GroupReadSpec {
  if (args[0]?.toUpperCase() !== 'GROUP' || args[1] === undefined || args[2] === undefined) throw syntaxError();
  const spec: GroupReadSpec = { group: args[1], consumer: args[2], count: Infinity, noAck: false, streams: [] };
  let i = 3;
  for (; i < args.length; i++) {
    const word = args[i]!.toUpperCase();
    if (word === 'STREAMS') break;
    if (word === 'COUNT') spec.count = Math.max(0, integerArg(args[++i])) || Infinity;
    else if (word === 'BLOCK') {
      spec.blockMs = integerArg(args[++i]);
      if (spec.blockMs < 0) throw new ReplyError('ERR timeout is negative');
    } else if (word === 'NOACK') spec.noAck = true;
    else throw syntaxError();
  }
  const rest = args.slice(i + 1);
  if (i === args.length || rest.length === 0 || rest.length % 2 !== 0) {
    throw new ReplyError("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.");
  }
  const half = rest.length / 2;
  for (let k = 0; k < half; k++) {
    const key = rest[k]!;
    const id = rest[half + k]!;
    findGroup(ctx, key, spec.group, 'XREADGROUP');
    if (id !== '>') parseId(id);
    spec.streams.push([key, id]);
  }
  return spec;
}

/** Delivers what the spec asks for; null when no stream read with '>' had anything new. */
export function readGroup(ctx: CommandContext, spec: GroupReadSpec): Reply {
  const now = Date.now();
  const out: Reply[] = [];
  for (const [key, idText] of spec.streams) {
    const [stream, group] = findGroup(ctx, key, spec.group, 'XREADGROUP');
    group.consumers.set(spec.consumer, now);
    if (idText === '>') {
      const from = firstAfter(stream.entries, group.lastDelivered);
      const fresh = stream.entries.slice(from, spec.count === Infinity ? undefined : from + spec.count);
      for (const entry of fresh) {
        group.lastDelivered = entry.id;
        if (!spec.noAck) group.pending.set(entry.id, { consumer: spec.consumer, deliveredAt: now, deliveries: 1 });
      }
      if (fresh.length > 0) out.push([key, fresh.map(entryReply)]);
    } else {
      const after = parseId(idText);
      const byId = new Map(stream.entries.map((e) => [e.id, e]));
      const own = [...group.pending.entries()]
        .filter(([id, p]) => p.consumer === spec.consumer && id > after)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .slice(0, spec.count)
        .map(([id]): Reply => {
          const entry = byId.get(id);
          return entry ? entryReply(entry) : [formatId(id), null];
        });
      out.push([key, own]);
    }
    writeStream(ctx.ds, key, stream);
  }
  return out.length > 0 ? out : null;
}

const xack: CommandImpl = (ctx, args) => {
  const [key, name, ...ids] = args;
  if (key === undefined || name === undefined || ids.length === 0) throw wrongArity('xack');
  const stream = readStream(ctx.ds, key);
  const group = stream?.groups.get(name);
  if (!stream || !group) return 0;
  let acked = 0;
  for (const id of ids) if (group.pending.delete(parseId(id))) acked++;
  if (acked > 0) writeStream(ctx.ds, key, stream);
  return acked;
};

const xpending: CommandImpl = (ctx, args) => {
  const [key, name, ...rest] = args;
  if (key === undefined || name === undefined) throw wrongArity('xpending');
  const [, group] = findGroup(ctx, key, name);
  const now = Date.now();
  const sorted = [...group.pending.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  if (rest.length === 0) {
    if (sorted.length === 0) return [0, null, null, null];
    const perConsumer = new Map<string, number>();
    for (const [, p] of sorted) perConsumer.set(p.consumer, (perConsumer.get(p.consumer) ?? 0) + 1);
    const consumers = [...perConsumer.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, n]) => [c, String(n)]);
    return [sorted.length, formatId(sorted[0]![0]), formatId(sorted[sorted.length - 1]![0]), consumers];
  }
  let minIdle = 0;
  let i = 0;
  if (rest[0]?.toUpperCase() === 'IDLE') {
    minIdle = integerArg(rest[1]);
    i = 2;
  }
  const [startText, endText, countText, consumer] = rest.slice(i);
  if (startText === undefined || endText === undefined || countText === undefined) throw syntaxError();
  const start = startText === '-' ? 0n : parseId(startText.replace(/^\(/, ''), 0n) + (startText.startsWith('(') ? 1n : 0n);
  const end = endText === '+' ? (MAX_SEQ << 64n) | MAX_SEQ : parseId(endText.replace(/^\(/, ''), MAX_SEQ) - (endText.startsWith('(') ? 1n : 0n);
  return sorted
    .filter(([id, p]) => id >= start && id <= end && now - p.deliveredAt >= minIdle && (consumer === undefined || p.consumer === consumer))
    .slice(0, Math.max(0, integerArg(countText)))
    .map(([id, p]) => [formatId(id), p.consumer, now - p.deliveredAt, p.deliveries]);
};

const xclaim: CommandImpl = (ctx, args) => {
  const [key, name, consumer, minIdleText, ...rest] = args;
  if (key === undefined || name === undefined || consumer === undefined || minIdleText === undefined || rest.length === 0) {
    throw wrongArity('xclaim');
  }
  const [stream, group] = findGroup(ctx, key, name);
  const minIdle = integerArg(minIdleText);
  const now = Date.now();
  const ids: bigint[] = [];
  let deliveredAt = now;
  let retryCount: number | undefined;
  let force = false;
  let justId = false;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!.toUpperCase();
    if (word === 'IDLE') deliveredAt = now - integerArg(rest[++i]);
    else if (word === 'TIME') deliveredAt = integerArg(rest[++i]);
    else if (word === 'RETRYCOUNT') retryCount = integerArg(rest[++i]);
    else if (word === 'FORCE') force = true;
    else if (word === 'JUSTID') justId = true;
    else if (word === 'LASTID') i++;
    else ids.push(parseId(rest[i]!));
  }
  const byId = new Map(stream.entries.map((e) => [e.id, e]));
  const claimed: Reply[] = [];
  for (const id of ids) {
    const entry = byId.get(id);
    let pending = group.pending.get(id);
    if (!pending) {
      if (!force || !entry) continue;
      pending = { consumer, deliveredAt: now, deliveries: 0 };
      group.pending.set(id, pending);
    } else if (now - pending.deliveredAt < minIdle) continue;
    if (!entry) {
      group.pending.delete(id); // the entry was deleted meanwhile: nothing to claim
      continue;
    }
    pending.consumer = consumer;
    pending.deliveredAt = deliveredAt;
    if (retryCount !== undefined) pending.deliveries = retryCount;
    else if (!justId) pending.deliveries++;
    claimed.push(justId ? formatId(id) : entryReply(entry));
  }
  group.consumers.set(consumer, now);
  writeStream(ctx.ds, key, stream);
  return claimed;
};

export const streamGroupCommands: Record<string, CommandImpl> = {
  xgroup,
  xreadgroup: (ctx, args) => readGroup(ctx, parseXreadgroup(ctx, args)),
  xack,
  xpending,
  xclaim,
};
