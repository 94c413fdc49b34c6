// The ioredis adapter behind Redis Sentinel (a master, a replica, three
// sentinels): the conformance suite, the config form, clear errors, and a
// failover followed without restarting the process.
import t from 'tap';
import { createIoredisBackend } from '../adapters/ioredis.ts';
import { sentinelCases } from './support/sentinel-cases.ts';

await sentinelCases(t, { name: 'ioredis', create: createIoredisBackend });
