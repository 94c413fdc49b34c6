// obniz's contract on every adapter: its scenarios leave a keyspace that
// matches the documented layout (the SDK's keys and values, coord's
// extensions), on embedded, ioredis and node-redis, and on a Redis Cluster
// under a hash-tag prefix (every script call in one slot).
import t from 'tap';
import plugin from '../plugins/obniz/index.ts';
import { contractOnAllAdapters } from './support/conformance.ts';

await contractOnAllAdapters(t, plugin);
