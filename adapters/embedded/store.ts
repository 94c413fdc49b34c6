// The key space of an embedded dataset, put behind ioredis-mock in place of its
// own. Its own copies the whole value on every read and write (a hash, set, list
// or sorted set: O(collection) per command); this one hands out the stored value
// itself, so a command costs what it touches. Every ioredis-mock command was
// checked for this: each one that changes a value it read stores it back (or
// deletes the key), and none changes a value it only reads. Sorted sets are kept
// as SortedSetMap, which keeps its members in order as they change.
import { Buffer } from 'node:buffer';
import type { EventEmitter } from 'node:events';
import type { MockData } from './dataset.ts';
import { SortedSetMap } from './sorted-set.ts';

/** ioredis-mock's shared expiry table (ms since the epoch by key). */
export interface SharedExpires {
  has(key: string): boolean;
  isExpired(key: string): boolean;
  delete(key: string): void;
}

export interface Store extends MockData {
  clear(): void;
  withKeyPrefix(prefix: string): Store;
}

export function createStore(expires: SharedExpires, modified: EventEmitter): Store {
  const values = new Map<string, unknown>();
  const live = (key: string): boolean => {
    if (expires.has(key) && expires.isExpired(key)) {
      store.delete(key);
      return false;
    }
    return values.has(key);
  };
  const store: Store = {
    clear: () => values.clear(),
    delete(key) {
      if (expires.has(key)) expires.delete(key);
      values.delete(key);
      modified.emit('modified', key);
    },
    get(key) {
      if (!live(key)) return undefined;
      const value = values.get(key);
      // Buffers stay copied as before: rare here, and cheap to copy.
      return Buffer.isBuffer(value) ? Buffer.from(value) : value;
    },
    has: live,
    keys: () => [...values.keys()].filter((key) => !(expires.has(key) && expires.isExpired(key))),
    set(key, value) {
      let stored = value;
      if (value instanceof Map && !(value instanceof SortedSetMap)) stored = SortedSetMap.from(value);
      else if (Buffer.isBuffer(value)) stored = Buffer.from(value);
      values.set(key, stored);
      modified.emit('modified', key);
    },
    withKeyPrefix(prefix) {
      if (prefix === '') return store;
      throw new Error('the embedded backend does not use key prefixes inside its dataset');
    },
  };
  return store;
}
