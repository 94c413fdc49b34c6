// On a Redis Cluster a key prefix without a hash tag would let a process say
// "ready" while its first script fails with CROSSSLOT: `coord run` refuses it
// at start, with one line naming the fix, exit 2 — with ioredis and node-redis.
// Each plugin may take its own prefix (<plugin>.keyPrefix): two plugins of one
// process then live on two masters, and the rule holds for each prefix.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, oneLineError } from './support/cli.ts';
import { startCluster } from './support/redis.ts';
import { until } from './support/until.ts';

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

/** The keys each master holds (SCAN on a cluster node lists its own keys only). */
function keysByPort(): Map<number, string[]> {
  return new Map(cluster.ports.map((port) => [port, spawnSync('redis-cli', ['-p', String(port), '--scan'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)]));
}

/** The masters holding keys under `prefix`. */
function mastersOf(prefix: string): number[] {
  return [...keysByPort()].filter(([, keys]) => keys.some((k) => k.startsWith(prefix))).map(([port]) => port);
}

for (const adapter of ['ioredis', 'node-redis']) {
  t.test(`${adapter}: two plugins of one process, each under its own prefix on its own master`, async (t) => {
    // {obniz-devices} is slot 5392 (1st master of 3), {load} 13699 (3rd).
    const obnizPrefix = `{obniz-devices}:${adapter}:`;
    const loadPrefix = `{load}:${adapter}:`;
    const run = coord([
      'run', '--plugin', 'obniz', '--plugin', 'load-test', '--role', 'slave', '--role', 'worker',
      '--set', 'obniz.worker=./test/fixtures/obniz/recording-worker.mjs', '--set', `obniz.keyPrefix=${obnizPrefix}`,
      '--redis', cluster.url, '--adapter', adapter, '--prefix', loadPrefix,
    ]);
    t.teardown(() => run.kill('SIGKILL'));
    await run.waitFor((l) => l.msg === 'ready', 30_000);
    await until('both plugins wrote keys', () => mastersOf(obnizPrefix).length > 0 && mastersOf(loadPrefix).length > 0, 10_000);
    const obnizMasters = mastersOf(obnizPrefix);
    const loadMasters = mastersOf(loadPrefix);
    t.equal(obnizMasters.length, 1, `obniz's keys on one master: ${obnizMasters}`);
    t.equal(loadMasters.length, 1, `load-test's keys on one master: ${loadMasters}`);
    t.not(obnizMasters[0], loadMasters[0], 'on different masters');
    t.equal(spawnSync('redis-cli', ['-p', String(cluster.ports[0]), 'cluster', 'keyslot', obnizPrefix], { encoding: 'utf8' }).stdout.trim(), '5392');
    run.kill('SIGTERM');
    t.equal(await run.exited, 0);
  });

  t.test(`${adapter}: a plugin's own prefix without a hash tag is refused`, async (t) => {
    const r = coordSync([
      'run', '--plugin', 'obniz', '--plugin', 'load-test', '--role', 'slave', '--role', 'worker',
      '--set', 'obniz.worker=./test/fixtures/obniz/recording-worker.mjs', '--set', 'obniz.keyPrefix=obniz:',
      '--redis', cluster.url, '--adapter', adapter, '--prefix', '{load}:',
    ]);
    oneLineError(t, r, 2, /^coord: config: obniz\.keyPrefix "obniz:" has no hash tag, .*plugin obniz.* e\.g\. --set obniz\.keyPrefix='\{obniz\}:'$/);
  });
}
