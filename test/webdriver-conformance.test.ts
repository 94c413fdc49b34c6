// webdriver's contract on every adapter: its scenarios leave a keyspace that
// matches WebGrid's layout (plus coord's extensions), on ioredis, node-redis
// and embedded, and on a Redis Cluster under a hash-tag prefix (every call in one slot).
import t from 'tap';
import plugin from '../plugins/webdriver/index.ts';
import { contractOnAllAdapters } from './support/conformance.ts';

await contractOnAllAdapters(t, plugin);
