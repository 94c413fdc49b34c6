// Conformance scenarios: drive the plugin's scripts and writers the way its
// roles do (no HTTP target needed) so the keyspace shows every key, then the
// suite holds it to the contract.
import type { ConformanceScenario } from '../../entries/plugin.ts';
import type { LoadTestConfig } from './config.ts';
import type { LoadTestKeys } from './contract.ts';
import { MetricsRecorder } from './metrics/recorder.ts';
import type { Ctx } from './context.ts';
import { addUsers, beginTest, broadcast, dropWorker, endTest, markRunning, nowSeconds as now, removeUsers, syncPool, transitionState } from './scripts.ts';

async function heartbeat(ctx: Ctx, workerId: string): Promise<void> {
  const key = ctx.keys.workerStatus({ workerId });
  await ctx.backend.multi([
    ['HSET', key, 'status', 'running', 'last_heartbeat', now(ctx), 'cpu_percent', 12.5, 'rss_bytes', 50_000_000, 'memory_percent', 1.2, 'total_ram_bytes', 4_000_000_000, 'epoch', 1, 'host', 'h1'],
    ['EXPIRE', key, 60],
    ['SADD', ctx.keys.workers(), workerId],
  ]);
}

async function startTest(ctx: Ctx, workers: string[]): Promise<number> {
  // A scenario may follow another on the same keyspace (the cluster-slot check runs them so): begin from IDLE.
  await ctx.backend.send(['SET', ctx.keys.testState(), 'IDLE']);
  // as the orchestrator begins one: IDLE → PREPARING, the epoch and its lease in one step
  const { epoch } = await beginTest(ctx, 'o1', 10);
  await ctx.backend.send(['HSET', ctx.keys.resources(), 'accounts', 3]);
  for (let i = 1; i <= 3; i++) await ctx.backend.send(['SET', ctx.keys.resource({ name: 'accounts', resourceId: i }), JSON.stringify({ login: `user${i}` })]);
  await broadcast(ctx, epoch, 'start_test', { scenario: '/s.js', params: {}, target_users: 4 }, workers);
  await transitionState(ctx, 'PREPARING', 'RUNNING', false, epoch);
  await addUsers(ctx, epoch, { count: 4, ids: [], target: 4, workers });
  await ctx.backend.send(['XADD', ctx.keys.timeline(), 'MAXLEN', '~', 1000, '*', 'ts', now(ctx), 'epoch', epoch, 'users', 4, 'target', 4, 'event', 'users', 'detail', 'reached 4']);
  return epoch;
}

export const scenarios: ConformanceScenario<LoadTestConfig, LoadTestKeys>[] = [
  {
    name: 'a test runs: workers beat, users are assigned and run, a resource is held, metrics are written',
    expects: ['testState', 'testEpoch', 'workers', 'users', 'resources', 'workerStatus', 'workerUsers', 'workerActiveUsers', 'user',
      'resourceAvailable', 'resourceLoaded', 'resource', 'metric', 'timeline', 'workerCommands', 'workerAck', 'metrics', 'cursor', 'orchestrator', 'generation'],
    async run(ctx) {
      await heartbeat(ctx, 'w1');
      await heartbeat(ctx, 'w2');
      const epoch = await startTest(ctx, ['w1', 'w2']);
      const userIds = ['1', '3'];
      await markRunning(ctx, 'w1', userIds);
      await syncPool(ctx, 'accounts');
      await ctx.backend.send(['SPOP', ctx.keys.resourceAvailable({ name: 'accounts' })]);
      const last = (await ctx.backend.send(['XREVRANGE', ctx.keys.workerCommands({ workerId: 'w1' }), '+', '-', 'COUNT', 1])) as [string, string[]][];
      await ctx.backend.send(['SET', ctx.keys.workerAck({ workerId: 'w1' }), last[0]![0], 'EX', 60]);
      const recorder = new MetricsRecorder(ctx, 'w1', epoch);
      recorder.record('GET /', 12.5);
      recorder.record('GET /', 30, 'HTTP 500');
      recorder.record('login', 80);
      await recorder.flush();
    },
  },
  {
    name: 'users go down and a dead worker is dropped, its users reassigned',
    expects: ['testState', 'workers', 'users', 'user', 'workerStatus', 'workerUsers', 'workerCommands'],
    async run(ctx) {
      await heartbeat(ctx, 'w1');
      await heartbeat(ctx, 'w2');
      const epoch = await startTest(ctx, ['w1', 'w2']);
      await removeUsers(ctx, epoch, { count: 1, target: 3 });
      const orphans = await dropWorker(ctx, 'w2');
      await addUsers(ctx, epoch, { count: 0, ids: orphans, target: 3, workers: ['w1'] });
      // the test ends as the orchestrator ends one: RUNNING → STOPPING, then STOPPING → IDLE with the lease given back
      await transitionState(ctx, 'RUNNING', 'STOPPING', false, epoch);
      await endTest(ctx, 'STOPPING', epoch, 'o1');
    },
  },
];
