// Conformance scenarios: drive the grid's scripts the way its roles do (no
// browsers needed) so the keyspace shows every key the plugin writes.
import type { ConformanceScenario } from '../../entries/plugin.ts';
import type { BrowserGridConfig } from './config.ts';
import type { BrowserGridKeys } from './contract.ts';
import type { Ctx } from './context.ts';
import { enqueue, removeWorker, selectKeys, selectWorker, touchWorker } from './scripts.ts';

async function register(ctx: Ctx, workerId: string, status = 'available'): Promise<void> {
  const browserType = 'chromium';
  const now = Math.floor(ctx.clock.now() / 1000);
  await touchWorker(ctx, `${browserType}:${workerId}`, ctx.config.redisKeyTtl, [
    'id', workerId, 'browserType', browserType, 'wsEndpoint', `ws://127.0.0.1:9/${workerId}`, 'status', status,
    'lastHeartbeat', now, 'startedAt', now, 'version', '1.0.0',
  ]);
}

function select(ctx: Ctx, connectionId: string) {
  const keys = selectKeys(ctx, 'chromium', '1.0', 'p1');
  return selectWorker(ctx, keys, { connectionId, ticket: '', exclude: [], version: '1.0', protocol: 'playwright' });
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
      await enqueue(ctx, { browserType: 'chromium', version: '1.0' }, `${ctx.clock.now() + 60_000}:p1:t1`, ctx.clock.now());
      await ctx.backend.send(['SET', ctx.keys.shutdownCommand({ browserType: 'chromium', workerId: 'w1' }), 'shutdown', 'EX', ctx.config.shutdownCommandTtl, 'NX']);
    },
  },
  {
    name: 'a worker drains and leaves; its counters go with it',
    expects: ['worker', 'activeConnections', 'lifetimeConnections', 'workerIndex'],
    async run(ctx) {
      await register(ctx, 'w1');
      await register(ctx, 'w2', 'draining');
      await removeWorker(ctx, 'chromium:w1');
    },
  },
];
