// A point-in-time copy of a keyspace: every key under a prefix with its type,
// value and TTL. The contract check (contract-check.ts), the conformance suite
// and `coord inspect` read it. Keys are read in pipelined batches: one round
// trip for the types, one for values and TTLs, per batch — not one per key.
import { ReplyError, type Backend, type Command, type Reply } from './backend.ts';
import { escapeGlob } from './contract.ts';

// escapeGlob lives with the patterns (contract.ts), in the plugin kit; this module is not.
export { escapeGlob } from './contract.ts';

interface SnapshotBase {
  /** The full key name, prefix included. */
  key: string;
  /** Milliseconds left before the key expires, or null when it has no TTL. */
  ttlMs: number | null;
}

export interface ZsetEntry {
  member: string;
  score: number;
}

export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
}

/**
 * One key of a keyspace snapshot: its name, TTL, type and value (decoded by
 * type: a hash as an object, a zset as members with scores, a stream as its
 * entries).
 */
export type KeySnapshot = SnapshotBase &
  (
    | { type: 'string'; value: string }
    | { type: 'hash'; value: Record<string, string> }
    | { type: 'set'; value: string[] }
    | { type: 'zset'; value: ZsetEntry[] }
    | { type: 'list'; value: string[] }
    | { type: 'stream'; value: StreamEntry[] }
    /** A type coord does not read (a module type such as ReJSON-RL); `redisType` is what TYPE said. */
    | { type: 'other'; redisType: string; value: null }
  );

/** Which keys snapshotKeyspace reads (a prefix) and how many per round trip. */
export interface SnapshotOptions {
  /** Only keys starting with this text (e.g. '{grid}:'); all keys when empty. */
  keyPrefix?: string;
  /** Keys per pipeline (default 500). */
  batchSize?: number;
}

const READ: Record<string, (key: string) => Command> = {
  string: (key) => ['GET', key],
  hash: (key) => ['HGETALL', key],
  set: (key) => ['SMEMBERS', key],
  zset: (key) => ['ZRANGE', key, 0, -1, 'WITHSCORES'],
  list: (key) => ['LRANGE', key, 0, -1],
  stream: (key) => ['XRANGE', key, '-', '+'],
};

/** A key whose type changed between TYPE and the read is read again, at most this many times. */
const ATTEMPTS = 3;

/**
 * Every key under the prefix, sorted by name, with its type, value and TTL.
 * Keys that vanish while being read are left out. Keys are read in pipelined
 * batches (two round trips per batch, not one per key). What contractSuite and
 * `coord inspect` check against a contract.
 *
 * @example
 * const snapshot = await snapshotKeyspace(backend, { keyPrefix: '{cron}:' });
 * for (const key of snapshot) console.log(key.key, key.type, key.ttlMs);
 */
export async function snapshotKeyspace(backend: Backend, opts: SnapshotOptions = {}): Promise<KeySnapshot[]> {
  const prefix = opts.keyPrefix ?? '';
  const batchSize = opts.batchSize ?? 500;
  const keys = new Set<string>();
  for await (const key of backend.scan(`${escapeGlob(prefix)}*`, 1000)) keys.add(key);
  const sorted = [...keys].sort();
  const out: KeySnapshot[] = [];
  for (let i = 0; i < sorted.length; i += batchSize) out.push(...(await readBatch(backend, sorted.slice(i, i + batchSize))));
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

async function readBatch(backend: Backend, batch: string[]): Promise<KeySnapshot[]> {
  const out: KeySnapshot[] = [];
  let pending = batch;
  for (let attempt = 0; attempt < ATTEMPTS && pending.length; attempt++) {
    const types = await backend.pipeline(pending.map((key): Command => ['TYPE', key]));
    const reads: { key: string; type: string }[] = [];
    const commands: Command[] = [];
    pending.forEach((key, i) => {
      const type = types[i];
      if (type instanceof ReplyError) throw new ReplyError(`${type.message} (snapshot: TYPE ${key})`);
      if (type === 'none' || typeof type !== 'string') return; // vanished since SCAN
      const read = READ[type];
      reads.push({ key, type });
      if (read) commands.push(read(key));
      commands.push(['PTTL', key]);
    });
    const replies = await backend.pipeline(commands);
    const retry: string[] = [];
    let at = 0;
    for (const { key, type } of reads) {
      const value = READ[type] ? replies[at++] : null;
      const ttl = replies[at++];
      if (value instanceof ReplyError) {
        if (value.code !== 'WRONGTYPE') throw new ReplyError(`${value.message} (snapshot: reading ${key}, a ${type})`);
        retry.push(key); // replaced by a key of another type since TYPE
        continue;
      }
      if (ttl instanceof ReplyError) throw new ReplyError(`${ttl.message} (snapshot: PTTL ${key})`);
      if (ttl === -2) continue; // vanished after the read
      const snap = decode(key, type, value ?? null, typeof ttl === 'number' && ttl >= 0 ? ttl : null);
      if (snap) out.push(snap);
    }
    pending = retry;
  }
  return out;
}

/** Turns a read reply into a snapshot; undefined when the key was gone (nil or empty: Redis keeps no empty collections). */
function decode(key: string, type: string, value: Reply, ttlMs: number | null): KeySnapshot | undefined {
  const base = { key, ttlMs };
  if (!READ[type]) return { ...base, type: 'other', redisType: type, value: null };
  if (value === null) return undefined;
  if (type === 'string') return { ...base, type, value: String(value) };
  const items = asArray(value);
  if (!items.length) return undefined;
  switch (type) {
    case 'hash':
      return { ...base, type, value: Object.fromEntries(pairs(items)) };
    case 'set':
      return { ...base, type, value: items.map(String).sort() };
    case 'list':
      return { ...base, type, value: items.map(String) };
    case 'zset':
      return { ...base, type, value: pairs(items).map(([member, score]) => ({ member, score: parseScore(score) })) };
    case 'stream':
      return {
        ...base,
        type,
        value: items.map((entry) => {
          const [id, fields] = asArray(entry);
          return { id: String(id), fields: Object.fromEntries(pairs(asArray(fields ?? []))) };
        }),
      };
  }
  return undefined;
}

function asArray(reply: Reply): Reply[] {
  return Array.isArray(reply) ? reply : [];
}

/** [a, b, c, d] → [[a, b], [c, d]] (HGETALL, ZRANGE WITHSCORES and stream entry fields are flat). */
function pairs(items: Reply[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) out.push([String(items[i]), String(items[i + 1])]);
  return out;
}

/** Redis writes infinite scores as 'inf' / '-inf'. */
function parseScore(text: string): number {
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  return Number(text);
}
