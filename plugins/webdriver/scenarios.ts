// Conformance scenarios: the grid's steps driven as its roles drive them (no
// browser needed), so the keyspace shows every key of WebGrid's layout and coord's
// extensions. The storage keys have their own scenario (storage/scenario.ts).
import type { ConformanceScenario } from '../../entries/plugin.ts';
import type { WebDriverConfig } from './config.ts';
import type { Ctx } from './context.ts';
import type { WebDriverKeys } from './contract.ts';
import { allocateSlot, appendLog, markAlive, purgeSession, queueSession, reclaimSlots, registerOrchestrator, scheduleSession, terminateSession } from './scripts.ts';
import { storageScenario } from './storage/scenario.ts';
import { rfc3339 } from './session/time.ts';
import { readTimeouts } from './session/timeouts.ts';

const ORCH_A = 'orch-a';
/** The second scenario's own orchestrator, so scenarios sharing one keyspace do not meet. */
const ORCH_B = 'orch-b';
const requested = { alwaysMatch: { browserName: 'chrome', 'coord:options': { name: 'login test', build: '42' } }, firstMatch: [{}] };

/** A session queued, given a slot, scheduled and (unless `upTo` says otherwise) served by a node. */
async function session(ctx: Ctx, sessionId: string, upTo: 'queued' | 'allocated' | 'scheduled' | 'alive', orchestratorId = ORCH_A): Promise<void> {
  await queueSession(ctx, { sessionId, requested, name: 'login test', build: '42', clientHost: '127.0.0.1', userAgent: 'selenium/4 (js linux)', meta: 'manager m1' });
  if (upTo === 'queued') return;
  const slot = (await ctx.backend.send(['LPOP', ctx.keys.slotsAvailable({ orchestratorId })])) as string;
  await allocateSlot(ctx, sessionId, orchestratorId, slot);
  if (upTo === 'allocated') return;
  await ctx.backend.send(['RPOPLPUSH', ctx.keys.backlog({ orchestratorId }), ctx.keys.pending({ orchestratorId })]);
  await scheduleSession(ctx, sessionId, orchestratorId, 'inline node');
  await appendLog(ctx, sessionId, 'manager', 'PENDING', `scheduled by ${orchestratorId}`);
  if (upTo === 'scheduled') return;
  const s = { sessionId };
  await ctx.backend.send(['LREM', ctx.keys.pending({ orchestratorId }), 0, sessionId]);
  for (const code of ['BOOT', 'DSTART', 'DALIVE'] as const) await appendLog(ctx, sessionId, 'node', code);
  await ctx.backend.send(['SET', ctx.keys.sessionNodeHeartbeat(s), rfc3339(ctx.clock.now()), 'EX', 60]);
  await ctx.backend.send(['HSET', ctx.keys.sessionCapabilities(s), 'actual', JSON.stringify({ browserName: 'chrome', browserVersion: '156.0.8078.108' })]);
  await appendLog(ctx, sessionId, 'node', 'LSINIT', 'driver session abc123');
  await ctx.backend.multi([
    ['HSET', ctx.keys.sessionUpstream(s), 'host', '127.0.0.1', 'port', 41234, 'driverSessionID', 'abc123'],
    ['RPUSH', ctx.keys.sessionReady(s), '127.0.0.1:41234'],
  ]);
  await ctx.backend.send(['LPOP', ctx.keys.sessionReady(s)]); // the waiting manager takes it
  await markAlive(ctx, sessionId, 'node 127.0.0.1:41234');
  await ctx.backend.send(['HSET', ctx.keys.sessionDownstream(s), 'lastSeen', rfc3339(ctx.clock.now())]);
}

const ids = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export const scenarios: ConformanceScenario<WebDriverConfig, WebDriverKeys>[] = [
  {
    name: 'a grid at work: orchestrator, manager, API, sessions in every state, metrics, a reclaimed orphan',
    expects: [
      'orchestrators', 'sessionsActive', 'sessionsTerminated', 'timeouts', 'managerHost', 'storageHost', 'apiHost',
      'sessionNodeHeartbeat', 'sessionManagerHeartbeat', 'sessionSlot', 'sessionOrchestrator', 'sessionLog', 'sessionStatus',
      'sessionCapabilities', 'sessionMetadata', 'sessionUpstream', 'sessionDownstream', 'sessionReady', 'sessionStorage',
      'orchestrator', 'orchestratorHeartbeat', 'orchestratorRetain', 'orchestratorPlatformName', 'orchestratorBrowsers',
      'slotsReclaimed', 'slotsAvailable', 'slots', 'backlog', 'pending', 'slotsHeld', 'managers',
      'httpRequests', 'httpBytes', 'sessionsTotal', 'sessionsDuration', 'startupCount', 'startupSum', 'startupBuckets',
      'logCounts', 'slotsReclaimedTotal',
    ],
    async run(ctx) {
      const c = ctx as Ctx;
      await readTimeouts(c);
      await registerOrchestrator(c, { orchestratorId: ORCH_A, type: 'local', platformName: 'linux', browsers: ['chrome::156.0.8078.108'], slots: 6 });
      await c.backend.send(['SET', c.keys.managerHost({ managerId: 'm1' }), '127.0.0.1:40001', 'EX', 120]);
      await c.backend.send(['ZADD', c.keys.managers(), c.clock.now(), 'm1']);
      await c.backend.send(['SET', c.keys.apiHost({ apiId: 'a1' }), '127.0.0.1:4445', 'EX', 60]);
      await c.backend.send(['SET', c.keys.storageHost({ storageId: 's1', providerId: 'p1' }), '127.0.0.1:40100', 'EX', 60]);

      await session(c, ids(1), 'alive');
      await c.backend.send(['SET', c.keys.sessionStorage({ sessionId: ids(1) }), 's1']);
      await session(c, ids(2), 'alive');
      await terminateSession(c, ids(2), { component: 'node', code: 'CLOSED', meta: 'DELETE /session by the client' });
      await appendLog(c, ids(2), 'node', 'HALT');
      await session(c, ids(3), 'scheduled');
      await session(c, ids(4), 'allocated');
      await session(c, ids(5), 'queued');
      await terminateSession(c, ids(5), { component: 'manager', code: 'CLEFT', meta: 'client left' });
      await session(c, ids(6), 'queued');
      await terminateSession(c, ids(6), { component: 'manager', code: 'QTIMEOUT', meta: 'queue timeout' });

      // a slot popped by a manager that died before allocating it: orphaned after two passes
      await c.backend.send(['LPOP', c.keys.slotsAvailable({ orchestratorId: ORCH_A })]);
      const first = await reclaimSlots(c, ORCH_A, []);
      await reclaimSlots(c, ORCH_A, first.suspects);

      await c.backend.send(['HINCRBY', c.keys.httpRequests({ method: 'POST' }), '200', 3]);
      await c.backend.send(['HINCRBY', c.keys.httpRequests({ method: 'GET' }), '404', 1]);
      await c.backend.send(['HINCRBY', c.keys.httpBytes(), 'in', 512]);
      await c.backend.send(['HINCRBY', c.keys.httpBytes(), 'out', 2048]);
    },
  },
  {
    name: 'dead sessions are reclaimed and counted; gc-style purge leaves only the grid',
    expects: ['slotsReclaimedTotal', 'sessionsTerminated', 'slotsReclaimed', 'slots'],
    async run(ctx) {
      const c = ctx as Ctx;
      await registerOrchestrator(c, { orchestratorId: ORCH_B, type: 'local', platformName: 'any', browsers: ['chrome::156.0.8078.108'], slots: 2 });
      await session(c, ids(7), 'alive', ORCH_B);
      // the node died: no heartbeat from node or manager
      await c.backend.send(['DEL', c.keys.sessionNodeHeartbeat({ sessionId: ids(7) }), c.keys.sessionManagerHeartbeat({ sessionId: ids(7) })]);
      const pass = await reclaimSlots(c, ORCH_B, []);
      for (const sessionId of pass.dead) await terminateSession(c, sessionId, { component: 'orchestrator', code: 'TERM', meta: 'no heartbeat', reason: 'dead' });
      await purgeSession(c, ids(99));
    },
  },
  storageScenario,
];
