// The key space of an embedded dataset, put behind ioredis-mock in place of its
// own. Its own copies the whole value on every read and write (a hash, set, list
// or sorted set: O(collection) per command); this one hands out the stored value
// itself, so a command costs what it touches. Every ioredis-mock command was
// checked for this: each one that changes a value it read stores it back (or
// deletes the key), and none changes a value it only reads. Sorted sets are kept
// as SortedSetMap, which keeps its members in order as they change. Expiry times
// live in a Map here too (ioredis-mock's table allocated an object per lookup).
import { Buffer } from 'node:buffer';
import type { EventEmitter } from 'node:events';
import type { MockData } from './dataset.ts';
import { SortedSetMap } from './sorted-set.ts';

/** Expiry times (ms since the epoch) by key, in the shape ioredis-mock's commands use. */
export class Expiries {
  private readonly at = new Map<string, number>();
  clear(): void {
    this.at.clear();
  }
  get(key: string): number | undefined {
    return this.at.get(key);
  }
  set(key: string, timestamp: number | string): void {
    this.at.set(key, +timestamp);
  }
  has(key: string): boolean {
    return this.at.has(key);
  }
  isExpired(key: string): boolean {
    const at = this.at.get(key);
    return at !== undefined && at <= Date.now();
  }
  delete(key: string): void {
    this.at.delete(key);
  }
}

export interface Store extends MockData {
  readonly expires: Expiries;
  clear(): void;
}

export function createStore(modified: EventEmitter): Store {
  const expires = new Expiries();
  const values = new Map<string, unknown>();
  const live = (key: string): boolean => {
    if (expires.isExpired(key)) {
      store.delete(key);
      return false;
    }
    return values.has(key);
  };
  const store: Store = {
    expires,
    clear: () => values.clear(),
    delete(key) {
      expires.delete(key);
      values.delete(key);
      modified.emit('modified', key);
    },
    get(key) {
      const value = values.get(key);
      if (value === undefined || !live(key)) return undefined;
      if (typeof value === 'string') return value;
      // Buffers stay copied as before: rare here, and cheap to copy.
      return Buffer.isBuffer(value) ? Buffer.from(value) : value;
    },
    has: live,
    keys: () => [...values.keys()].filter((key) => !expires.isExpired(key)),
    set(key, value) {
      let stored = value;
      if (value instanceof Map && !(value instanceof SortedSetMap)) stored = SortedSetMap.from(value);
      else if (Buffer.isBuffer(value)) stored = Buffer.from(value);
      values.set(key, stored);
      modified.emit('modified', key);
    },
  };
  return store;
}
