// The node-redis (@redis/client) adapter against real redis-servers: the
// conformance suite on a server and on a cluster, plus reconnects, passwords,
// TLS and cluster routing.
import t from 'tap';
import { createNodeRedisBackend } from '../adapters/node-redis.ts';
import { adapterCases } from './support/adapter-cases.ts';

await adapterCases(t, {
  name: 'node-redis',
  create: createNodeRedisBackend,
  module: new URL('../adapters/node-redis.ts', import.meta.url),
  exportName: 'createNodeRedisBackend',
});
