// The orchestrator (type local): registers what this machine offers and its
// slots, takes sessions from its backlog into pending with the reliable-queue
// pattern (BRPOPLPUSH; an item leaves pending only once its node is up or has
// failed, so a crash loses nothing), starts one node per session (SCHED or
// STARTFAIL), recycles reclaimed slots into slots.available (telling the managers so: announceSlot), and every
// slotReclaimInterval reclaims the slots of dead sessions and orphaned slots.
import type { BlockingConnection, Role } from '../../../entries/plugin.ts';
import { browserEntry, machineOrchestratorId } from '../node/browsers.ts';
import { offeredEngines } from '../node/engines.ts';
import { DriverPool } from '../node/driver-pool.ts';
import type { Ctx } from '../context.ts';
import { SessionNode } from '../node/session-node.ts';
import { removeLeftoverFolders } from '../node/session-folder.ts';
import { spawnNodeProcess } from '../node/node-process.ts';
import { announceSlot, appendLog, reclaimSlots, registerOrchestrator, scheduleSession, terminateSession } from '../scripts.ts';
import { readTimeouts } from '../session/timeouts.ts';
import { checkEncoder } from '../recording/settings.ts';
import { IDLE_BLOCK_SECONDS } from '../manager/blocking-waits.ts';
import { WebDriverError } from '../errors.ts';

/** Blocking waits last this long when nothing comes (an idle orchestrator's loops cost a command each per this many seconds); stopping closes their connections rather than waiting. */
const BLOCK_SECONDS = IDLE_BLOCK_SECONDS;

/** The orchestrator as the other roles of its process see it (ctx.peer('orchestrator')). */
export interface OrchestratorRole extends Role {
  /**
   * Its nodes serving now (inline), by session id: a proxy in the same
   * process (standalone) hands them commands directly instead of over a socket.
   */
  readonly serving: ReadonlyMap<string, SessionNode>;
}

export function orchestratorRole(ctx: Ctx): OrchestratorRole {
  const { config, logger, keys, backend } = ctx;
  const id = config.orchestrator.id ?? machineOrchestratorId();
  const o = { orchestratorId: id };
  const nodes = new Map<string, { end(reason: string): Promise<void>; restoreIfLost?(): Promise<boolean> }>();
  const serving = new Map<string, SessionNode>();
  const handling = new Set<Promise<void>>();
  const blocking: BlockingConnection[] = [];
  let browsers: string[] = [];
  let stopping = false;
  /** Loops end when the role stops or the process starts stopping (an aborted sleep returns at once: without this check a loop would spin). */
  const done = () => stopping || ctx.signal.aborted;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let loops: Promise<void>[] = [];
  let suspects: string[] = [];
  let driverTimeout = config.timeouts.driverStartup;
  // what this host can serve, each refused here (at start, in one line) when named and missing
  const engines = offeredEngines(config.orchestrator);
  // warm drivers are chromedrivers: WebKitWebDriver and geckodriver serve one session each
  const pool = new DriverPool(
    config.orchestrator.nodeMode === 'inline' && engines.some((e) => e.name === 'chrome') ? config.orchestrator.warmDrivers : 0,
    { binary: config.orchestrator.driverBinary, logFile: config.orchestrator.driverLogFile, timeoutMs: () => driverTimeout * 1000 },
    (error) => logger.warn('a warm driver failed to start; nodes start their own', { error: error.message }),
  );

  if (config.orchestrator.nodeMode === 'process' && (!ctx.global.redis.url || ctx.global.redis.url.startsWith('embedded') || ctx.global.redis.adapter === 'embedded')) {
    throw new WebDriverError('webdriver.orchestrator.nodeMode=process needs a Redis URL (--redis): node processes cannot share the embedded backend', { code: 'COORD_ERR_WEBDRIVER_NODE_MODE_NEEDS_REDIS' });
  }

  checkEncoder(config); // recording on by default and no ffmpeg: one clear line now, not a silent session without video later

  let registered = false;
  let lossSeen = false;
  /**
   * Registers (at start and every heartbeat). When Redis lost this
   * orchestrator's keys (it restarted empty), the live sessions' slots are
   * written back first, or registering would start them as free: inline
   * nodes are asked to do it now; node processes do it on their own
   * heartbeat, so registering waits one beat for them.
   */
  async function register(): Promise<void> {
    if (registered && (await backend.send(['SISMEMBER', keys.orchestrators(), id])) === 0) {
      if (config.orchestrator.nodeMode === 'inline') await Promise.all([...nodes.values()].map((node) => node.restoreIfLost?.()));
      else if (nodes.size && !lossSeen) return void (lossSeen = true);
      logger.info('Redis lost the orchestrator\'s keys; registering again', { orchestratorId: id, sessions: nodes.size });
    }
    lossSeen = false;
    await registerOrchestrator(ctx, { orchestratorId: id, type: 'local', platformName: config.orchestrator.platformName, browsers, slots: config.orchestrator.slots });
    registered = true;
  }

  /** One session from the backlog (or found in pending after a restart): schedule it and start its node. */
  async function handle(sessionId: string, recovered: boolean): Promise<void> {
    const s = { sessionId };
    const removeFromPending = () => backend.send(['LREM', keys.pending(o), 0, sessionId]);
    if (recovered && config.orchestrator.nodeMode === 'process' && (await backend.send(['EXISTS', keys.sessionNodeHeartbeat(s)])) === 1) {
      // its node process outlived the previous orchestrator process and carries on
      await removeFromPending();
      return;
    }
    // only a session found in pending after a restart can have been served already (fresh from the backlog it cannot)
    if (recovered && (await backend.send(['HGET', keys.sessionStatus(s), 'aliveAt']))) {
      // only after a restart: the session was served by a node of the previous process
      if (config.orchestrator.nodeMode === 'inline') {
        await terminateSession(ctx, sessionId, { component: 'orchestrator', code: 'TERM', meta: 'its node ended with the previous orchestrator process', reason: 'dead' });
      }
      await removeFromPending();
      return;
    }
    const [scheduled, timeouts] = await Promise.all([
      scheduleSession(ctx, sessionId, id, `${config.orchestrator.nodeMode} node on ${id}${recovered ? ' (recovered from pending after a restart)' : ''}`),
      readTimeouts(ctx),
    ]);
    if (scheduled === 0) return; // ended meanwhile; the script took it out of pending
    try {
      if (config.orchestrator.nodeMode === 'inline') await startInline(sessionId, timeouts);
      else await startNodeProcess(sessionId, timeouts.nodeStartup);
    } catch (error) {
      logger.warn('node failed to start', { sessionId, error: (error as Error).message });
    } finally {
      await removeFromPending();
    }
  }

  async function startInline(sessionId: string, timeouts: Awaited<ReturnType<typeof readTimeouts>>): Promise<void> {
    driverTimeout = timeouts.driverStartup;
    const node = new SessionNode(ctx, { sessionId, orchestratorId: id, timeouts, takeWarmDriver: () => pool.take(), giveBackDriver: (driver) => pool.give(driver), serving });
    nodes.set(sessionId, { end: (reason) => node.end('TERM', reason), restoreIfLost: () => node.restoreIfLost() });
    void node.finished.then(() => nodes.delete(sessionId));
    try {
      await node.start();
    } catch (error) {
      await appendLog(ctx, sessionId, 'orchestrator', 'STARTFAIL', (error as Error).message).catch(() => {});
      throw error;
    }
  }

  /** A node process: started, then watched until it has published its upstream (or failed). */
  async function startNodeProcess(sessionId: string, nodeStartup: number): Promise<void> {
    const node = spawnNodeProcess(ctx, sessionId, id);
    nodes.set(sessionId, { end: async () => void node.child.kill('SIGTERM') });
    void node.exited.then(async (why) => {
      nodes.delete(sessionId);
      if (stopping) return;
      const ended = await terminateSession(ctx, sessionId, { component: 'orchestrator', code: 'TERM', meta: why, reason: 'dead' }).catch(() => undefined);
      if (ended?.terminated) logger.warn('node process died; its session is terminated and its slot reclaimed', { sessionId, why, slot: ended.slot });
    });
    const deadline = Date.now() + nodeStartup * 1000;
    let exited = false;
    void node.exited.then(() => (exited = true));
    while (Date.now() < deadline && !exited && !stopping) {
      const [upstream, active] = (await backend.pipeline([
        ['EXISTS', keys.sessionUpstream({ sessionId })],
        ['SISMEMBER', keys.sessionsActive(), sessionId],
      ])) as number[];
      if (upstream === 1 || active === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (exited) {
      await appendLog(ctx, sessionId, 'orchestrator', 'STARTFAIL', await node.exited).catch(() => {});
      throw new WebDriverError(await node.exited, { code: 'COORD_ERR_WEBDRIVER_NODE_START' });
    }
  }

  async function backlogLoop(conn: BlockingConnection): Promise<void> {
    while (!done()) {
      try {
        const sessionId = (await conn.send(['BRPOPLPUSH', keys.backlog(o), keys.pending(o), BLOCK_SECONDS])) as string | null;
        if (!sessionId || done()) continue;
        const job = handle(sessionId, false).catch((error) => logger.error('scheduling failed', { sessionId, error: (error as Error).message }));
        handling.add(job);
        void job.finally(() => handling.delete(job));
      } catch (error) {
        if (done()) return;
        logger.warn('backlog wait failed; retrying', { error: (error as Error).message });
        await ctx.clock.sleep(1000, ctx.signal).catch(() => {});
      }
    }
  }

  /** Reclaimed slots go back into slots.available (a slot the orchestrator no longer has is dropped). */
  async function recycleLoop(conn: BlockingConnection): Promise<void> {
    while (!done()) {
      try {
        const slot = (await conn.send(['BLMOVE', keys.slotsReclaimed(o), keys.slotsAvailable(o), 'LEFT', 'RIGHT', BLOCK_SECONDS])) as string | null;
        if (!slot) continue;
        if ((await backend.send(['SISMEMBER', keys.slots(o), slot])) === 0) await backend.send(['LREM', keys.slotsAvailable(o), 0, slot]);
        // the managers block on their own slots.freed, not on every orchestrator's slots.available
        else await announceSlot(ctx, id);
      } catch (error) {
        if (done()) return;
        logger.warn('slot recycling failed; retrying', { error: (error as Error).message });
        await ctx.clock.sleep(1000, ctx.signal).catch(() => {});
      }
    }
  }

  /** One reclaim pass: orphaned slots back, dead sessions terminated (their slots back, counted dead). */
  async function reclaim(): Promise<void> {
    const { orphaned, suspects: next, dead } = await reclaimSlots(ctx, id, suspects);
    suspects = next;
    if (orphaned.length) logger.warn('reclaimed orphaned slots', { slots: orphaned });
    for (const sessionId of dead) {
      if (nodes.has(sessionId)) continue; // ours and running: its heartbeat is only late
      const ended = await terminateSession(ctx, sessionId, { component: 'orchestrator', code: 'TERM', meta: 'neither the node nor the manager has a heartbeat', reason: 'dead' });
      if (ended.terminated) logger.warn('reclaimed the slot of a dead session', { sessionId, slot: ended.slot });
    }
  }

  /**
   * After a restart (kill -9): inline nodes lived in the previous process, so a
   * session of ours that a node served is gone with it — its slot comes back
   * now, not once its node heartbeat lapses. (Node processes outlive us and
   * keep their heartbeat; reclaim judges those.)
   */
  async function endOrphanedInline(): Promise<void> {
    if (config.orchestrator.nodeMode !== 'inline') return;
    const held = (await backend.send(['HVALS', keys.slotsHeld(o)])) as string[];
    const served = held.length ? ((await backend.pipeline(held.map((sessionId) => ['HGET', keys.sessionStatus({ sessionId }), 'aliveAt'] as [string, string, string]))) as (string | null)[]) : [];
    for (const [i, sessionId] of held.entries()) {
      if (!served[i] || nodes.has(sessionId)) continue;
      const ended = await terminateSession(ctx, sessionId, { component: 'orchestrator', code: 'TERM', meta: 'its node ended with the previous orchestrator process', reason: 'dead' });
      if (ended.terminated) logger.warn('the node of a session ended with the previous orchestrator process; session terminated and its slot reclaimed', { sessionId, slot: ended.slot });
    }
  }

  async function reclaimLoop(): Promise<void> {
    while (!done()) {
      const { slotReclaimInterval } = await readTimeouts(ctx).catch(() => config.timeouts);
      await ctx.clock.sleep(slotReclaimInterval * 1000, ctx.signal).catch(() => {});
      if (done()) return;
      await reclaim().catch((error) => logger.warn('slot reclaim failed', { error: (error as Error).message }));
    }
  }

  return {
    serving,
    async start() {
      browsers = await Promise.all(engines.map((engine) => browserEntry(engine, config.orchestrator.xvfb)));
      await readTimeouts(ctx);
      // uploads and downloads of sessions whose process died (kill -9) without removing them
      const leftovers = await removeLeftoverFolders();
      if (leftovers) logger.info('removed session folders of processes that died', { folders: leftovers });
      await register();
      heartbeat = setInterval(() => void register().catch((error) => logger.warn('orchestrator heartbeat failed', { error: (error as Error).message })), config.heartbeat.interval * 1000);
      // after a crash: what was pending is handled again before anything new
      const pending = (await backend.send(['LRANGE', keys.pending(o), 0, -1])) as string[];
      for (const sessionId of [...new Set(pending)].reverse()) {
        const job = handle(sessionId, true).catch((error) => logger.error('recovery failed', { sessionId, error: (error as Error).message }));
        handling.add(job);
        void job.finally(() => handling.delete(job));
      }
      if (pending.length) logger.info('recovering pending sessions', { sessions: pending });
      await endOrphanedInline();
      await reclaim();
      pool.fill();
      blocking.push(await backend.blocking(), await backend.blocking());
      loops = [backlogLoop(blocking[0]!), recycleLoop(blocking[1]!), reclaimLoop()];
      logger.info('orchestrator ready', { orchestratorId: id, slots: config.orchestrator.slots, browsers, nodeMode: config.orchestrator.nodeMode });
    },
    async stop(reason) {
      stopping = true;
      clearInterval(heartbeat);
      // the loops' blocking calls end with their connections (what a cut-off BRPOPLPUSH moved stays in pending)
      for (const conn of blocking) await conn.close().catch(() => {});
      await Promise.all(loops);
      await Promise.allSettled([...handling]);
      await Promise.all([...nodes.values()].map((n) => n.end(`orchestrator stopping (${reason})`)));
      await pool.close();
      // stays registered (retain) so its ID, slots and lists are found again on restart; the heartbeat lapses
      await backend.send(['DEL', keys.orchestratorHeartbeat(o)]).catch(() => {});
    },
  };
}
