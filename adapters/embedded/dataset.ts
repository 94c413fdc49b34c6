// One in-process dataset per embedded:// name. ioredis-mock shares data between
// instances whose host:port/db match, so every instance made with a dataset's
// options sees the same expiries and pub/sub channels; each one's keys are put
// in the dataset's one non-copying store (store.ts).
//
// ioredis-mock is used past its published API, so package.json pins it to one
// exact version (test/embedded-dependencies.test.ts fails when the installed one
// differs or an internal below is gone: an upgrade is a deliberate act). What
// the adapter reaches for: RedisMock.Pipeline's _createCommand (the synchronous
// emulators, mock-commands.ts); an instance's `context` (modifiedKeyEvents,
// channels, patternChannels) and its `data` / `expires`, replaced by store.ts;
// and how its commands store values (a hash as a plain object, a set as a Set,
// a list as an array, a sorted set as a Map of member → {score, value}).
// ioredis-mock loads without fengari (Lua in JS, for its own EVAL): the
// embedded backend's scripts run on lua-vm.ts (see redis-mock.ts).
import type { EventEmitter } from 'node:events';
import { redisMock } from './redis-mock.ts';
import { createStore, type Store } from './store.ts';

/** The ioredis-mock internals the adapter builds on (not in its published types). */
export interface MockData {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  has(key: string): boolean;
  delete(key: string): void;
  keys(): string[];
}

/** Expiry times (ms since the epoch) by key. */
export interface MockExpires {
  get(key: string): number;
  set(key: string, at: number): void;
  has(key: string): boolean;
  delete(key: string): void;
}

export interface MockInstance extends EventEmitter {
  readonly data: MockData;
  readonly expires: MockExpires;
  readonly context: { modifiedKeyEvents: EventEmitter; channels: EventEmitter; patternChannels: EventEmitter };
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  psubscribe(...patterns: string[]): Promise<unknown>;
  punsubscribe(...patterns: string[]): Promise<unknown>;
  disconnect(): void;
}

export interface Dataset {
  readonly name: string;
  /** The instance every command of the dataset runs on. */
  readonly mock: MockInstance;
  /** Fires with the key after every write or deletion in the dataset (ioredis-mock's own signal). */
  readonly modified: EventEmitter;
  /** A new ioredis-mock instance on the same data (one per subscriber connection). */
  connect(): MockInstance;
}

const datasets = new Map<string, Dataset>();

export function dataset(name: string): Dataset {
  let found = datasets.get(name);
  if (!found) {
    found = open(name);
    datasets.set(name, found);
  }
  return found;
}

function open(name: string): Dataset {
  // A host no real client would use keeps these datasets apart from other ioredis-mock users in the process.
  const options = { host: `coord-embedded:${name}`, port: 6379, db: 0, lazyConnect: false };
  const Mock = redisMock() as new (options: object) => MockInstance;
  let store: Store | undefined;
  // Every instance of the dataset reads and writes one non-copying store (see store.ts).
  const instance = () => {
    const mock = new Mock(options);
    store ??= createStore(mock.context.modifiedKeyEvents);
    Object.assign(mock, { data: store, expires: store.expires });
    return mock;
  };
  const mock = instance();
  const { modifiedKeyEvents, channels, patternChannels } = mock.context;
  // Every instance (subscribers included) listens on these; many connections are normal here.
  for (const emitter of [modifiedKeyEvents, channels, patternChannels]) emitter.setMaxListeners(0);
  return { name, mock, modified: modifiedKeyEvents, connect: instance };
}
