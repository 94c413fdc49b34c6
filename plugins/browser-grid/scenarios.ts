// Conformance scenarios: drive the grid's scripts the way its roles do (no
// browsers needed) so the keyspace shows every key the plugin writes.
import type { ConformanceScenario } from '../../core/plugin.ts';
import type { BrowserGridConfig } from './config.ts';
import type { BrowserGridKeys } from './contract.ts';
import type { Ctx } from './context.ts';

async function register(ctx: Ctx, workerId: string, status = 'available'): Promise<void> {
  const browserType = 'chromium';
  await ctx.scripts.run('touchWorker', {
    keys: { worker: { browserType, workerId }, active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType }, versions: { browserType } },
    args: {
      ref: `${browserType}:${workerId}`,
      nowMs: ctx.clock.now(),
      staleMs: ctx.config.staleThreshold * 1000,
      maxConcurrent: ctx.config.maxConcurrentSessions,
      maxLifetime: ctx.config.maxLifetimeSessions,
      ttl: ctx.config.redisKeyTtl,
      fields: ['id', workerId, 'browserType', browserType, 'wsEndpoint', `ws://127.0.0.1:9/${workerId}`, 'status', status,
        'lastHeartbeat', Math.floor(ctx.clock.now() / 1000), 'startedAt', Math.floor(ctx.clock.now() / 1000), 'version', '1.0.0'],
    },
  });
}

function select(ctx: Ctx, connectionId: string, ticket = '') {
  const browserType = 'chromium';
  return ctx.scripts.run('selectWorker', {
    keys: { active: {}, lifetime: {}, workerIndex: { browserType }, freeIndex: { browserType }, queue: { browserType, version: '1.0' }, leases: { proxyId: 'p1' }, versions: { browserType } },
    args: {
      nowMs: ctx.clock.now(),
      staleMs: ctx.config.staleThreshold * 1000,
      maxConcurrent: ctx.config.maxConcurrentSessions,
      maxLifetime: ctx.config.maxLifetimeSessions,
      connectionId,
      ticket,
      exclude: '',
      version: '1.0',
      protocol: 'playwright',
    },
  });
}

export const scenarios: ConformanceScenario<BrowserGridConfig, BrowserGridKeys>[] = [
  {
    name: 'workers register, sessions are selected and leased, a client queues, a worker is told to shut down',
    expects: ['worker', 'activeConnections', 'lifetimeConnections', 'shutdownCommand', 'workerIndex', 'freeIndex', 'versions', 'proxyIndex', 'leases', 'queue'],
    async run(ctx) {
      await register(ctx, 'w1');
      await register(ctx, 'w2');
      await ctx.backend.send(['ZADD', ctx.keys.proxyIndex(), ctx.clock.now(), 'p1']);
      await select(ctx, 'c1');
      await select(ctx, 'c2');
      await ctx.scripts.run('enqueue', {
        keys: { queue: { browserType: 'chromium', version: '1.0' } },
        args: { ticket: `${ctx.clock.now() + 60_000}:p1:t1`, nowMs: ctx.clock.now(), maxQueue: 10 },
      });
      await ctx.backend.send(['SET', ctx.keys.shutdownCommand({ browserType: 'chromium', workerId: 'w1' }), 'shutdown', 'EX', ctx.config.shutdownCommandTtl, 'NX']);
    },
  },
  {
    name: 'a worker drains and leaves; its counters go with it',
    expects: ['worker', 'activeConnections', 'lifetimeConnections', 'workerIndex'],
    async run(ctx) {
      await register(ctx, 'w1');
      await register(ctx, 'w2', 'draining');
      await ctx.scripts.run('removeWorker', {
        keys: { worker: { browserType: 'chromium', workerId: 'w1' }, active: {}, lifetime: {}, workerIndex: { browserType: 'chromium' }, freeIndex: { browserType: 'chromium' }, versions: { browserType: 'chromium' } },
        args: { ref: 'chromium:w1' },
      });
    },
  },
];
