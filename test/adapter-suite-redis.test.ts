// Real Redis is the reference: the adapter suite's expectations must hold on a
// plain redis-server (reached through the ioredis adapter), or the suite is wrong.
import t from 'tap';
import { adapterSuite } from '../conformance/adapter-suite.ts';
import { createIoredisBackend } from '../adapters/ioredis.ts';
import { startRedis } from './support/redis.ts';

const server = await startRedis();
t.teardown(() => server.stop());
await adapterSuite(t, { name: 'redis-server via ioredis', make: () => createIoredisBackend({ url: server.url }) });
