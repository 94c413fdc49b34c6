// Every runnable deployment example started as its file says, with only what
// differs on a test machine given on top (the environment names the test's
// Redis, flags pick free ports and one browser per worker): its roles come
// up and serve — a Playwright client gets a page through the grid's proxy,
// and the cron job defined in the file runs and shows its output.
// (The systemd unit and docker-compose run these same many-machines files.)
import { join } from 'node:path';
import t from 'tap';
import { buildIfStale } from './support/build.ts';
import { coord, type CoordProcess, type LogLine } from './support/cli.ts';
import { connect, startPageServer, titleOf } from './support/grid.ts';
import { freePort, startRedis } from './support/redis.ts';

t.before(() => buildIfStale());
const redis = await startRedis();
t.teardown(() => redis.stop());
const page = await startPageServer();
t.teardown(() => page.close());

const file = (path: string) => join('examples/deploy', path);
let run = 0;

/** `coord run --config FILE …` against the test's Redis, under a prefix of its own (the environment overrides the file). */
function start(config: string, prefix: string, ...flags: string[]): CoordProcess {
  const p = coord(['run', '--config', file(config), ...flags], { COORD_REDIS_URL: redis.url, COORD_KEY_PREFIX: prefix, COORD_LOG_LEVEL: 'info' });
  t.teardown(() => p.kill('SIGKILL'));
  return p;
}

async function ready(p: CoordProcess): Promise<string[]> {
  return (await p.waitFor((l) => l.msg === 'ready', 90_000)).roles as string[];
}

async function stop(t: Tap.Test, ...processes: CoordProcess[]): Promise<void> {
  for (const p of processes) p.kill('SIGTERM');
  for (const p of processes) t.equal(await p.exited, 0, 'stops cleanly on SIGTERM');
}

async function browse(t: Tap.Test, port: number): Promise<void> {
  const browser = await connect(port);
  t.teardown(() => browser.close().catch(() => {}));
  t.equal(await titleOf(browser, `${page.url}/deploy`), 'coord /deploy', 'a Playwright client gets a page through the proxy');
  await browser.close();
}

const jobRan = (id: string) => (l: LogLine) => l.msg === 'job ran' && l.job === id && l.status === 'ok';

t.test('one-machine/coord.yaml: a grid and the cron plugin in one process', async (t) => {
  const port = await freePort();
  const p = start('one-machine/coord.yaml', `{deploy-${++run}}:`, '--set', `browser-grid.port=${port}`, '--set', 'browser-grid.workers=1');
  t.same(await ready(p), ['browser-grid/worker', 'browser-grid/proxy', 'cron/scheduler', 'cron/runner'], "both plugins' default roles");
  await browse(t, port);
  const ran = await p.waitFor(jobRan('heartbeat'), 30_000);
  t.match(ran.output, /^coord is alive on \S+$/, 'the heartbeat job ran once its tick was due, with its output logged');
  await stop(t, p);
});

t.test('many-machines: a proxy host and a worker host', async (t) => {
  const port = await freePort();
  const prefix = `{deploy-${++run}}:`;
  const proxy = start('many-machines/proxy-host.yaml', prefix, '--set', `browser-grid.port=${port}`);
  const worker = start('many-machines/worker-host.yaml', prefix, '--set', 'browser-grid.advertiseHost=127.0.0.1', '--set', 'browser-grid.workers=1');
  t.same(await ready(proxy), ['browser-grid/proxy', 'browser-grid/reaper', 'cron/scheduler']);
  t.same(await ready(worker), ['browser-grid/worker', 'cron/runner']);
  await browse(t, port);
  const ran = await worker.waitFor(jobRan('report'), 30_000);
  t.match(ran.output, /^5-minute report from \S+$/, "the proxy host's scheduler queued the job, the worker host's runner ran it");
  t.notOk(proxy.lines.some((l) => l.msg === 'job ran'), 'the proxy host runs no jobs (no runner role)');
  await stop(t, worker, proxy);
});

t.test('kubernetes/coord: the proxy and worker pod configs', async (t) => {
  const port = await freePort();
  const prefix = `{deploy-${++run}}:`;
  const proxy = start('kubernetes/coord/proxy.yaml', prefix, '--set', `browser-grid.port=${port}`);
  const worker = start('kubernetes/coord/worker.yaml', prefix, '--set', 'browser-grid.advertiseHost=127.0.0.1', '--set', 'browser-grid.workers=1');
  t.same(await ready(proxy), ['browser-grid/proxy']);
  t.same(await ready(worker), ['browser-grid/worker']);
  await browse(t, port);
  const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { workers: unknown[] };
  t.equal(status.workers.length, 1, 'the readiness probe path answers, with the worker pod listed');
  await stop(t, worker, proxy);
});
