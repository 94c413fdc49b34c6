// load-test's contract on every adapter: its scenarios leave a keyspace that
// matches vikhry's layout plus coord's additions, on ioredis, node-redis and
// embedded, and on a Redis Cluster under a hash-tag prefix (every call in one slot).
import t from 'tap';
import plugin from '../plugins/load-test/index.ts';
import { contractOnAllAdapters } from './support/conformance.ts';

await contractOnAllAdapters(t, plugin);
