// The example cron plugin as users run it: three separate `coord run`
// processes on one real Redis — two on Node (the compiled CLI, loading the
// plugin's TypeScript by folder and by file) and one on Deno — each with a
// scheduler and a runner. Every tick of every job runs exactly once, spread
// over the processes, also across a kill -9 of one of them; `coord cron
// status` reports the same counts the command's side effects show.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { buildIfStale } from './support/build.ts';
import { coord, coordSync, type CoordProcess } from './support/cli.ts';
import { startRedis } from './support/redis.ts';

t.before(() => buildIfStale());
const redis = await startRedis();
t.teardown(() => redis.stop());
const dir = mkdtempSync(join(tmpdir(), 'coord-cron-mp-'));
const out = join(dir, 'runs.txt');
const prefix = '{cron-mp}:';
const config = join(dir, 'cron.yaml');
const line = `echo "$COORD_CRON_JOB $COORD_CRON_TICK $COORD_CRON_RUNNER" >> ${out}`;
writeFileSync(
  config,
  [
    'plugins:',
    '  cron:',
    '    # a tick whose runner is killed between claim and finish is recorded lost within ~2.5 s',
    '    leaseGrace: 1',
    '    sweepInterval: 0.5',
    '    jobs:',
    `      - { id: every-second, every: 1, command: '${line}' }`,
    `      - { id: also-every-second, every: 1, command: '${line}' }`,
    `      - { id: every-two, every: 2, command: '${line}' }`,
    '',
  ].join('\n'),
);
const env = { REDIS_URL: redis.url, COORD_KEY_PREFIX: prefix, COORD_LOG_LEVEL: 'info' };

function start(runner: string, plugin: string, runtime: 'node' | 'deno'): CoordProcess {
  const p = coord(['run', '--plugin', plugin, '--config', config, '--set', `cron.runnerId=${runner}`], env, runtime);
  t.teardown(() => p.kill('SIGKILL'));
  return p;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('three processes, one Redis: each tick of each job runs once', async (t) => {
  const a = start('node-a', './examples/cron', 'node');
  const b = start('node-b', './examples/cron/index.ts', 'node');
  const c = start('deno-c', './examples/cron', 'deno');
  for (const p of [a, b, c]) await p.waitFor((l) => l.msg === 'ready', 90_000);
  t.pass('all three are ready (scheduler and runner each)');

  await sleep(4000);
  b.kill('SIGKILL');
  await b.exited;
  t.pass('node-b killed with SIGKILL');
  await sleep(4000);
  a.kill('SIGTERM');
  c.kill('SIGTERM');
  t.equal(await a.exited, 0, 'node-a stops cleanly on SIGTERM');
  t.equal(await c.exited, 0, 'deno-c stops cleanly on SIGTERM');

  const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string, string]);
  const backend = await createBackend({ url: redis.url });
  t.teardown(() => backend.close());
  const history = ((await backend.send(['XRANGE', `${prefix}runs`, '-', '+'])) as [string, string[]][]).map(([, f]) =>
    Object.fromEntries(f.flatMap((v, i) => (i % 2 ? [] : [[v, f[i + 1]!]]))),
  );
  for (const job of ['every-second', 'also-every-second', 'every-two']) {
    const ticks = lines.filter(([id]) => id === job).map(([, tick]) => Number(tick));
    t.same(ticks.length, new Set(ticks).size, `${job}: no tick ran twice (${ticks.length} runs)`);
    const every = job === 'every-two' ? 2 : 1;
    const first = Math.min(...ticks);
    const last = Math.max(...ticks);
    const lost = history.filter((e) => e.jobId === job && e.status === 'lost').map((e) => Number(e.tick));
    const missing = [];
    for (let tick = first; tick <= last; tick += every) if (!ticks.includes(tick) && !lost.includes(tick)) missing.push(tick);
    t.same(missing, [], `${job}: every tick from the first to the last ran (or was recorded lost: ${lost.length})`);
    t.ok(ticks.length >= (every === 1 ? 6 : 3), `${job}: ran through the kill (${ticks.length} runs)`);
    const ok = history.filter((e) => e.jobId === job && e.status === 'ok').map((e) => Number(e.tick));
    t.same([...ok].sort(), [...ok].filter((v, i, all) => all.indexOf(v) === i).sort(), `${job}: recorded once per tick`);
    t.ok(ok.every((tick) => ticks.includes(tick)), `${job}: every recorded run left its line`);
  }
  const runners = new Set(lines.map(([, , runner]) => runner));
  t.ok(runners.size >= 2, `the runs are spread over the processes: ${[...runners].join(', ')}`);
  t.ok([...runners].every((r) => ['node-a', 'node-b', 'deno-c'].includes(r)), 'only the three runners ran jobs');

  const status = coordSync(['cron', 'status', '--plugin', './examples/cron', '--json'], env);
  t.equal(status.status, 0, status.stderr);
  const parsed = JSON.parse(status.stdout) as { jobs: { id: string; runs: number; lost: number; lastTick: number }[]; due: number; running: number };
  t.same(parsed.jobs.map((j) => j.id), ['also-every-second', 'every-second', 'every-two']);
  for (const j of parsed.jobs) {
    const okRuns = history.filter((e) => e.jobId === j.id && (e.status === 'ok' || e.status === 'failed')).length;
    t.equal(j.runs, okRuns, `cron status: ${j.id} ran ${j.runs} times, as the history says`);
  }
  const table = coordSync(['cron', 'status', '--plugin', './examples/cron'], env);
  t.equal(table.status, 0, table.stderr);
  t.match(table.stdout, /^job\s+every\s+last tick\s+runs\s+failed\s+lost\s+skipped\s+last\s+runner/);
  t.match(table.stdout, /every-two\s+2s\s+\d{4}-\d\d-\d\dT/);
  t.ok(existsSync(out));
});

t.test('a runner killed mid-run: its tick is recorded lost when the lease ends, and not run again', async (t) => {
  const log = join(dir, 'slow.txt');
  const slowConfig = join(dir, 'slow.yaml');
  const step = (what: string) => `echo "${what} $COORD_CRON_TICK $COORD_CRON_RUNNER" >> ${log}`;
  writeFileSync(
    slowConfig,
    [
      'redis:',
      "  keyPrefix: '{cron-slow}:'",
      'plugins:',
      '  cron:',
      '    leaseGrace: 0',
      '    sweepInterval: 0.5',
      '    jobs:',
      // a run needs 1.5 s; its lease (the timeout) leaves 2 s more, so a slow start on a loaded machine loses no second tick
      `      - { id: slow, every: 4, timeout: 3.5, command: '${step('start')}; sleep 1.5; ${step('end')}' }`,
      '',
    ].join('\n'),
  );
  const slowEnv = { REDIS_URL: redis.url, COORD_LOG_LEVEL: 'info' };
  const x = coord(['run', '--plugin', './examples/cron', '--config', slowConfig, '--set', 'cron.runnerId=x'], slowEnv);
  t.teardown(() => x.kill('SIGKILL'));
  await x.waitFor((l) => l.msg === 'ready', 60_000);
  const started = async () => (existsSync(log) ? readFileSync(log, 'utf8') : '').match(/^start (\d+) x$/m);
  let first: RegExpMatchArray | null = null;
  for (let i = 0; i < 200 && !first; i++) first = (await started()) ?? (await sleep(25), null);
  t.ok(first, 'x started a run');
  x.kill('SIGKILL');
  await x.exited;
  const tick = first![1]!;

  const y = coord(['run', '--plugin', './examples/cron', '--config', slowConfig, '--set', 'cron.runnerId=y'], slowEnv);
  t.teardown(() => y.kill('SIGKILL'));
  const lostLine = await y.waitFor((l) => l.msg === 'tick lost: its lease expired before the run finished', 30_000);
  t.equal(lostLine.tick, `slow:${tick}`, 'y\'s scheduler records the killed run\'s tick as lost');
  await y.waitFor((l) => l.msg === 'job ran' && l.status === 'ok', 30_000);
  y.kill('SIGTERM');
  t.equal(await y.exited, 0);

  const text = readFileSync(log, 'utf8');
  t.notMatch(text, new RegExp(`^end ${tick} `, 'm'), 'the killed run never finished');
  t.equal(text.match(new RegExp(`^start ${tick} `, 'gm'))?.length, 1, 'and its tick was not run again');
  t.match(text, /^end \d+ y$/m, 'y ran the next ticks to the end');
  const backend = await createBackend({ url: redis.url });
  t.teardown(() => backend.close());
  // HGETALL is field, value, field, value…: read it as pairs (the value "lost" of lastStatus must not pass for the field).
  const flat = (await backend.send(['HGETALL', '{cron-slow}:job:slow'])) as string[];
  const job = Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]]] : [])));
  t.equal(job.lost, '1', `the job counts one lost tick (${JSON.stringify(job)})`);
});
