// `coord run` stopped by SIGTERM after its Redis went away for good: the
// webdriver grid in one process (six roles) and obniz's master, on both
// adapters. The stop gives Redis 3 s to come back, then closes the backend
// (one warning, COORD_ERR_STOP_REDIS_UNREACHABLE), and every role's stop goes
// on with its Redis calls failing: exit 0 within seconds. Before, each role's
// stop waited on calls held for the reconnect until roleStopTimeout (30 s
// each: webdriver took over 2 minutes, obniz 30 s). With Redis healthy the
// stop drains as before: no such warning, nothing failed. Figures printed.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { buildIfStale } from './support/build.ts';
import { coord, root, type CoordProcess } from './support/cli.ts';
import { freePort, startRedis } from './support/redis.ts';

buildIfStale();
/** Generous for a loaded 2-core machine: the stop takes ~4 s here; a hang is 30 s per role. */
const EXIT_BOUND_S = 20;
const dir = mkdtempSync(join(tmpdir(), 'stop-without-redis-'));
const devices = join(dir, 'devices.yaml');
writeFileSync(devices, '- id: 1234-5678\n- 8765-4321\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const plugins = {
  webdriver: async () => ['--set', `webdriver.proxy.port=${await freePort()}`, '--set', `webdriver.api.port=${await freePort()}`],
  obniz: async () => ['--worker', join(root, 'test/fixtures/obniz/recording-worker.mjs'), '--devices', devices],
};

/** `coord run --plugin P` (every default role) on a Redis of its own, until ready; then Redis lost (or not) and SIGTERM. */
async function stopCase(t: Test, plugin: keyof typeof plugins, adapter: string, lose: boolean): Promise<{ p: CoordProcess; code: number | null | string; seconds: number }> {
  const redis = await startRedis();
  t.teardown(() => redis.stop(true));
  const p = coord(['run', '--plugin', plugin, '--redis', redis.url, '--adapter', adapter, '--prefix', `{stop-${plugin}}:`, ...(await plugins[plugin]())]);
  t.teardown(() => p.kill('SIGKILL'));
  await p.waitFor((l) => l.msg === 'ready');
  await sleep(1000); // the roles' loops are running
  if (lose) {
    await redis.down();
    await sleep(1000); // the adapter notices at once (the socket closes); were it later, the grace would count from then
  }
  const at = Date.now();
  p.kill('SIGTERM');
  const code = await Promise.race([p.exited, sleep(60_000).then(() => 'still running after 60 s')]);
  return { p, code, seconds: (Date.now() - at) / 1000 };
}

for (const plugin of Object.keys(plugins) as (keyof typeof plugins)[]) {
  for (const adapter of ['ioredis', 'node-redis']) {
    t.test(`${plugin} on ${adapter}, Redis gone: SIGTERM ends the process in seconds, exit 0, one warning`, async (t) => {
      const { p, code, seconds } = await stopCase(t, plugin, adapter, true);
      t.comment(`${plugin} ${adapter}: exited ${code} ${seconds.toFixed(1)} s after SIGTERM with Redis gone`);
      t.equal(code, 0, 'exit 0');
      t.ok(seconds <= EXIT_BOUND_S, `within ${EXIT_BOUND_S} s (${seconds.toFixed(1)} s)`);
      const warned = p.lines.filter((l) => l.code === 'COORD_ERR_STOP_REDIS_UNREACHABLE');
      t.equal(warned.length, 1, 'one line says Redis was given up');
      t.match(warned[0]?.msg, /^Redis at redis:\/\/127\.0\.0\.1:\d+ unreachable while stopping \(.+\) and not back within 3 s: closing the backend/);
      t.same(p.lines.filter((l) => l.code === 'COORD_ERR_ROLE_STOP_TIMEOUT').map((l) => l.msg), [], 'no role waited out roleStopTimeout');
      t.ok(p.lines.filter((l) => l.msg === 'role stopped').length > 0, 'the roles say they stopped');
      t.notMatch(p.stdout() + p.stderr(), /\n\s+at /, 'no stack trace');
    });
  }
  t.test(`${plugin}, Redis healthy: the stop drains as before, nothing given up or failed`, async (t) => {
    const { p, code, seconds } = await stopCase(t, plugin, 'node-redis', false);
    t.comment(`${plugin}: exited ${code} ${seconds.toFixed(1)} s after SIGTERM with Redis healthy`);
    t.equal(code, 0, 'exit 0');
    const stopping = p.lines.findIndex((l) => l.msg === 'stopping');
    const after = p.lines.slice(stopping);
    t.same(after.filter((l) => l.level !== 30 && l.level !== 20).map((l) => l.msg), [], 'no warning or error while stopping');
    t.ok(after.filter((l) => l.msg === 'role stopped').length > 0, 'the roles say they stopped');
  });
}
