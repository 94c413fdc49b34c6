// The ioredis adapter against real redis-servers: the conformance suite on a
// server and on a cluster, plus reconnects, passwords, TLS and cluster routing.
import t from 'tap';
import { createIoredisBackend } from '../adapters/ioredis.ts';
import { adapterCases } from './support/adapter-cases.ts';

await adapterCases(t, {
  name: 'ioredis',
  create: createIoredisBackend,
  module: new URL('../adapters/ioredis.ts', import.meta.url),
  exportName: 'createIoredisBackend',
});
