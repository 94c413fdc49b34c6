// The node-redis (@redis/client) adapter behind Redis Sentinel (a master, a
// replica, three sentinels): the conformance suite, the config form, clear
// errors, and a failover followed without restarting the process.
import t from 'tap';
import { createNodeRedisBackend } from '../adapters/node-redis.ts';
import { sentinelCases } from './support/sentinel-cases.ts';

await sentinelCases(t, { name: 'node-redis', create: createNodeRedisBackend });
