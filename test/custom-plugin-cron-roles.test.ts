// The example cron plugin's roles in this process, as `coord run` starts
// them, on real Redis: jobs run their shell command once per tick with the
// documented environment, a run past its timeout is killed and counted as
// failed, stop() waits for the runs in flight, and bad job lists are one
// config error each. (Exactly-once across processes: custom-plugin-cron-processes.)
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../core/config.ts';
import { memoryLogger } from '../core/logger.ts';
import { startRoles, type ProcessHandle } from '../core/runtime.ts';
import { connectBackend } from '../adapters/index.ts';
import { cronStatus } from '../examples/cron/commands.ts';
import type { CronJob } from '../examples/cron/config.ts';
import plugin from '../examples/cron/index.ts';
import type { CronContext } from '../examples/cron/context.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import { startRedis } from './support/redis.ts';
import { until } from './support/until.ts';

const redis = await startRedis();
t.teardown(() => redis.stop());
const dir = mkdtempSync(join(tmpdir(), 'coord-cron-roles-'));
let run = 0;

async function start(jobs: CronJob[], options: Record<string, unknown> = {}) {
  const prefix = `{cron-roles-${++run}}:`;
  const config = loadConfig({
    plugins: [plugin],
    env: {},
    flags: [
      { path: 'redis.url', value: redis.url },
      { path: 'redis.keyPrefix', value: prefix },
      { path: 'cron.jobs', value: jobs },
      ...Object.entries(options).map(([k, v]) => ({ path: `cron.${k}`, value: v })),
    ],
  });
  const logger = memoryLogger();
  const handle: ProcessHandle = await startRoles({ plugins: [plugin], config, logger, backend: connectBackend });
  const ctx = scenarioContext({ plugin, backend: handle.backend, keyPrefix: prefix, signal: handle.signal }) as unknown as CronContext;
  return { handle, logs: logger.lines, status: () => cronStatus(ctx) };
}


t.test('a job runs its command once per tick, with COORD_CRON_JOB, _TICK and _RUNNER set', async (t) => {
  const out = join(dir, 'env.txt');
  const p = await start([{ id: 'hello', every: 1, command: `echo "$COORD_CRON_JOB $COORD_CRON_TICK $COORD_CRON_RUNNER" >> ${out}` }], { runnerId: 'runner-one' });
  t.same(p.handle.roles.map((r) => r.role), ['scheduler', 'runner'], 'both roles, in declaration order');
  await until('three runs', async () => (await p.status()).jobs[0]?.runs! >= 3);
  await p.handle.stop('test');
  const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => l.split(' '));
  const ticks = lines.map(([, tick]) => Number(tick));
  t.ok(lines.every(([job, , runner]) => job === 'hello' && runner === 'runner-one'), 'job and runner in the environment');
  t.same(ticks, [...new Set(ticks)], 'no tick twice');
  t.ok(ticks.every((tick, i) => i === 0 || tick === ticks[i - 1]! + 1), `consecutive seconds: ${ticks.join(' ')}`);
  const status = await p.status().catch(() => undefined); // the backend is closed after stop
  t.equal(status, undefined);
  t.ok(p.logs.some((l) => l.msg === 'job ran' && l.fields.job === 'hello' && l.fields.status === 'ok'), 'each run is logged');
});

t.test('a run past its timeout is killed and counted as failed; a failing command too', async (t) => {
  const p = await start([
    { id: 'slow', every: 2, command: 'sleep 30', timeout: 0.5 },
    { id: 'broken', every: 2, command: 'exit 3' },
  ]);
  t.teardown(() => p.handle.stop('test'));
  const status = await until('both jobs to fail', async () => {
    const s = await p.status();
    return s.jobs.every((j) => j.failed >= 1) && s;
  });
  t.match(status.jobs.find((j) => j.id === 'slow'), { lastStatus: 'failed', lost: 0 });
  t.ok(p.logs.some((l) => l.msg === 'job ran' && l.fields.job === 'slow' && l.fields.exitCode === -1 && (l.fields.ms as number) < 5000), 'killed at its timeout (exit -1)');
  t.ok(p.logs.some((l) => l.msg === 'job ran' && l.fields.job === 'broken' && l.fields.exitCode === 3), 'the exit code is recorded');
});

t.test('stop() waits for the runs in flight and records them', async (t) => {
  const out = join(dir, 'drain.txt');
  const p = await start([{ id: 'drain', every: 1, command: `sleep 1.5; echo done >> ${out}`, timeout: 5 }], { concurrency: 1 });
  await until('a run to start', async () => (await p.status()).running === 1);
  const stopping = Date.now();
  await p.handle.stop('SIGTERM');
  t.ok(Date.now() - stopping >= 500, 'stop waited for the run');
  t.ok(existsSync(out) && readFileSync(out, 'utf8').includes('done'), 'the run finished');
  t.ok(p.logs.some((l) => l.msg === 'job ran' && l.fields.status === 'ok'), 'and was recorded before the process stopped');
});

t.test('bad job lists: one config error each, naming the job', async (t) => {
  const load = (jobs: unknown) => () => loadConfig({ plugins: [plugin], env: {}, flags: [{ path: 'cron.jobs', value: jobs }] });
  t.throws(load([{ id: 'a', every: 1, command: 'true' }, { id: 'a', every: 5, command: 'true' }]), {
    name: 'ConfigError',
    message: 'config: cron.jobs[1].id "a" is also the id of jobs[0]: job ids must be unique',
  });
  t.throws(load([{ id: 'a:b', every: 1, command: 'true' }]), { message: /^config: cron\.jobs\[0\]\.id = "a:b" \(from flag --set cron\.jobs\): expected string of at most 100 characters matching/ });
  t.throws(load([{ id: 'a', every: 0, command: 'true' }]), { message: 'config: cron.jobs[0].every = 0 (from flag --set cron.jobs): expected integer >= 1 <= 604800' });
  t.throws(load([{ id: 'a', every: 1 }]), ConfigError, 'a job without a command');
});
