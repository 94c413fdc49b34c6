// How a stream lives in ioredis-mock's data: one plain object under the key (so
// DEL, EXISTS, EXPIRE, RENAME and SCAN treat it like any key), marked by a symbol,
// holding its entries in id order and its consumer groups. Ids are kept as one
// bigint (ms << 64 | seq) so they compare with < and >.
import type { Dataset } from './dataset.ts';
import { ReplyError } from '../../core/backend.ts';
import { wrongType } from './reply-error.ts';

export const STREAM = Symbol('coord.embedded.stream');

export interface StreamEntry {
  readonly id: bigint;
  readonly fields: readonly string[];
}

export interface PendingEntry {
  consumer: string;
  deliveredAt: number;
  deliveries: number;
}

export interface Group {
  lastDelivered: bigint;
  /** Pending (delivered, not yet acknowledged) entries by id. */
  pending: Map<bigint, PendingEntry>;
  /** Consumer name → last time seen (ms). */
  consumers: Map<string, number>;
}

export interface StreamValue {
  readonly [STREAM]: true;
  entries: StreamEntry[];
  lastId: bigint;
  groups: Map<string, Group>;
}

export const MAX_SEQ = (1n << 64n) - 1n;

export function isStream(value: unknown): value is StreamValue {
  return typeof value === 'object' && value !== null && STREAM in value;
}

/** The stream at `key`; undefined when there is none; WRONGTYPE when the key holds something else. */
export function readStream(ds: Dataset, key: string): StreamValue | undefined {
  const value = ds.mock.data.get(key);
  if (value === undefined) return undefined;
  if (!isStream(value)) throw wrongType();
  return value;
}

export function emptyStream(): StreamValue {
  return { [STREAM]: true, entries: [], lastId: 0n, groups: new Map() };
}

/** Stores the stream back, which also signals the write to blocked readers and WATCH. */
export function writeStream(ds: Dataset, key: string, stream: StreamValue): void {
  ds.mock.data.set(key, stream);
}

export function formatId(id: bigint): string {
  return `${id >> 64n}-${id & MAX_SEQ}`;
}

/**
 * Parses 'ms-seq' or 'ms'; a missing seq becomes `missingSeq` (0 for a start,
 * MAX_SEQ for an end). Throws the error Redis gives for a malformed id.
 */
export function parseId(text: string, missingSeq = 0n): bigint {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  if (!m) throw new ReplyError('ERR Invalid stream ID specified as stream command argument');
  const ms = BigInt(m[1]!);
  const seq = m[2] === undefined ? missingSeq : BigInt(m[2]);
  if (ms > MAX_SEQ || seq > MAX_SEQ) throw new ReplyError('ERR Invalid stream ID specified as stream command argument');
  return (ms << 64n) | seq;
}

/** The index of the first entry whose id is above `id` (entries are in id order): a binary search. */
export function firstAfter(entries: readonly StreamEntry[], id: bigint): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.id > id) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** An entry as Redis replies it: [id, [field, value, …]]. */
export function entryReply(entry: StreamEntry): [string, string[]] {
  return [formatId(entry.id), [...entry.fields]];
}
