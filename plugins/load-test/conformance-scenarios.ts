// Conformance scenarios: drive the plugin's scripts and writers the way its
// roles do (no HTTP target needed) so the keyspace shows every key, then the
// suite holds it to the contract.
import type { ConformanceScenario } from '../../entries/plugin.ts';
import type { LoadTestConfig } from './config.ts';
import type { LoadTestKeys } from './contract.ts';
import { MetricsRecorder } from './metrics/recorder.ts';
import type { Ctx } from './context.ts';

const now = (ctx: Ctx) => (ctx.clock.now() / 1000).toFixed(3);

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
  const reply = (await ctx.scripts.run('beginTest', { keys: { state: {}, epoch: {}, lease: {}, generation: {} }, args: { owner: 'o1', leaseSeconds: 10, newGeneration: 'g1' } })) as string[];
  const epoch = Number(reply[1]);
  await ctx.backend.send(['HSET', ctx.keys.resources(), 'accounts', 3]);
  for (let i = 1; i <= 3; i++) await ctx.backend.send(['SET', ctx.keys.resource({ name: 'accounts', resourceId: i }), JSON.stringify({ login: `user${i}` })]);
  await ctx.scripts.run('broadcast', {
    keys: { epoch: {} },
    args: { expectEpoch: epoch, type: 'start_test', payload: JSON.stringify({ scenario: '/s.js', params: {}, target_users: 4 }), commandId: 'c0', now: now(ctx), cap: 1000, workers },
  });
  await ctx.scripts.run('transitionState', { keys: { state: {}, epoch: {} }, args: { from: 'PREPARING', to: 'RUNNING', bump: '0', expectEpoch: epoch } });
  await ctx.scripts.run('addUsers', {
    keys: { users: {}, cursor: {}, state: {}, epoch: {} },
    args: { expectEpoch: epoch, now: now(ctx), commandId: 'c1', cap: 1000, count: 4, ids: '[]', target: 4, workers },
  });
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
      await ctx.scripts.run('markRunning', {
        keys: { active: { workerId: 'w1' }, users: userIds.map((userId) => ({ userId })) },
        args: { workerId: 'w1', now: now(ctx), userIds },
      });
      await ctx.scripts.run('syncPool', { keys: { resources: {}, available: { name: 'accounts' }, loaded: { name: 'accounts' } }, args: { name: 'accounts' } });
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
      await ctx.scripts.run('removeUsers', {
        keys: { users: {}, state: {}, epoch: {} },
        args: { expectEpoch: epoch, now: now(ctx), commandId: 'c2', cap: 1000, count: 1, target: 3 },
      });
      const orphans = (await ctx.scripts.run('dropWorker', { keys: { workers: {}, status: { workerId: 'w2' } }, args: { workerId: 'w2', now: now(ctx), keepSeconds: 3600 } })) as string[];
      await ctx.scripts.run('addUsers', {
        keys: { users: {}, cursor: {}, state: {}, epoch: {} },
        args: { expectEpoch: epoch, now: now(ctx), commandId: 'c3', cap: 1000, count: 0, ids: JSON.stringify(orphans), target: 3, workers: ['w1'] },
      });
      // the test ends as the orchestrator ends one: RUNNING → STOPPING, then STOPPING → IDLE with the lease given back
      await ctx.scripts.run('transitionState', { keys: { state: {}, epoch: {} }, args: { from: 'RUNNING', to: 'STOPPING', bump: '0', expectEpoch: epoch } });
      await ctx.scripts.run('endTest', { keys: { state: {}, epoch: {}, lease: {} }, args: { from: 'STOPPING', expectEpoch: epoch, owner: 'o1' } });
    },
  },
];
