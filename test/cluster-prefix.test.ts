// On a Redis Cluster a key prefix without a hash tag would let a process say
// "ready" while its first script fails with CROSSSLOT: `coord run` refuses it
// at start, with one line naming the fix, exit 2 — with ioredis and node-redis.
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, oneLineError } from './support/cli.ts';
import { startCluster } from './support/redis.ts';

t.before(() => buildIfStale());
const cluster = await startCluster();
t.teardown(() => cluster.stop());

for (const adapter of ['ioredis', 'node-redis']) {
  t.test(`${adapter}: a prefix without a hash tag is refused`, async (t) => {
    const base = ['run', '--plugin', 'obniz', '--role', 'slave', '--redis', cluster.url, '--adapter', adapter];
    oneLineError(t, coordSync([...base, '--prefix', 'obniz:']), 2, /^coord: config: redis\.keyPrefix "obniz:" has no hash tag, .* e\.g\. --prefix '\{obniz\}:'$/);
    oneLineError(t, coordSync(base), 2, /^coord: config: redis\.keyPrefix "" has no hash tag, .*plugin obniz.*--prefix '\{obniz\}:'$/);
    // `{}` is no tag: Redis hashes the whole key then.
    oneLineError(t, coordSync([...base, '--prefix', '{}:']), 2, /redis\.keyPrefix "\{\}:" has no hash tag/);
  });

  t.test(`${adapter}: a hash-tag prefix starts`, async (t) => {
    const run = coord(['run', '--plugin', 'obniz', '--role', 'slave', '--set', 'obniz.worker=./test/fixtures/obniz/recording-worker.mjs', '--redis', cluster.url, '--adapter', adapter, '--prefix', `{obniz-${adapter}}:`]);
    t.teardown(() => run.kill('SIGKILL'));
    await run.waitFor((l) => l.msg === 'ready', 30_000);
    run.kill('SIGTERM');
    t.equal(await run.exited, 0);
  });
}
