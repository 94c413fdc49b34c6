// The example plugin (examples/cron) against the shared contract suite on
// every adapter: embedded, ioredis and node-redis on a real Redis, and both
// clients on a Redis Cluster under a hash-tag prefix (every script call in
// one slot). Its scenarios drive the same scripts its roles call. And the
// same through `coord conformance --plugin ./examples/cron` on Node.
import t from 'tap';
import plugin from '../examples/cron/index.ts';
import { pluginScenarios } from '../core/plugin.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync } from './support/cli.ts';
import { contractOnAllAdapters } from './support/conformance.ts';

const redis = { url: (await contractOnAllAdapters(t, plugin)).redisUrl };

t.test('coord conformance --plugin ./examples/cron: the same suite from the CLI (Node), on every adapter', async (t) => {
  buildIfStale();
  const r = coordSync(['conformance', '--plugin', './examples/cron', '--redis', redis.url], { REDIS_URL: '', COORD_KEY_PREFIX: '' });
  t.equal(r.status, 0, `exit 0: ${r.stderr}`);
  for (const adapter of ['ioredis', 'node-redis', 'embedded']) {
    for (const scenario of await pluginScenarios(plugin)) {
      t.match(r.stdout, new RegExp(`^contract cron on ${adapter}\\s+${scenario.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+\\d+\\s+0\\s+0$`, 'm'), `${adapter}: ${scenario.name}: passes`);
    }
  }
  t.match(r.stdout, /\n\d+ sections, 0 failed\n$/);
});
