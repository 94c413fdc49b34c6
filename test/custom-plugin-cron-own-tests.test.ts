// The example plugin's own tap tests (examples/cron/test/cron.test.ts), run
// as they are with REDIS_URL pointing at a real Redis: the pattern docs/plugins.md
// shows a plugin author, on all three adapters.
import t from 'tap';
import { startRedis } from './support/redis.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
process.env.REDIS_URL = redis.url;
await import('../examples/cron/test/cron.test.ts');
