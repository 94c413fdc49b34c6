// The worker role: registers in `workers`, writes its heartbeat to
// worker:<id>:status, and reads its command stream from where it last
// acknowledged — so a command sent before it was listening is not lost.
// Commands of an older epoch than the worker's are ignored — unless the
// deployment's generation changed (Redis restarted empty and test:epoch counts
// from 0 again): then the worker drops what it ran and follows the new epochs.
// A worker that cannot reach Redis stops its users by itself within a bound
// (load-test.redisLostAfter after its last heartbeat, and never later than
// the test's planned end plus a grace), and says so at once: a load generator
// must not go on firing once nobody can stop it.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { BlockingConnection, Reply, Role } from '../../../entries/plugin.ts';
import { REDIS_STEP_MS, within } from '../bounded.ts';
import { decodeEnvelope, type Envelope, type SetRatePayload, type StartPayload } from '../envelope.ts';
import { loadScenario } from '../scenario/loader.ts';
import { SystemStats } from './system-stats.ts';
import { UserThread, type UsersSession } from '../users/thread-session.ts';
import { TestSession } from '../users/worker-session.ts';
import type { Ctx } from '../context.ts';

/** The worker as its process's handle shows it (handle.role('load-test', 'worker')): `coord load run` interrupts its users. */
export interface WorkerRole extends Role {
  readonly id: string;
  /** The test it runs now, if any. */
  session(): UsersSession | undefined;
  /** Ctrl-C: the users of the test it runs are aborted at once. */
  interrupt(): void;
}

/** Past a test's planned end (and the users' grace period), how long a worker waits for stop_test before it stops its users itself. */
const STOP_TEST_GRACE_MS = 10_000;

/** A worker id nobody else has: the host's name and a random suffix. */
export function newWorkerId(): string {
  return `${hostname().replace(/[^A-Za-z0-9_.-]/g, '-')}-${randomBytes(3).toString('hex')}`;
}

/** One worker; with `threads`, each test's users run in a worker thread of their own (thread-session.ts). */
export function workerRole(ctx: Ctx, opts: { id?: string; threads?: boolean } = {}): WorkerRole {
  const { config, keys, backend, logger, clock } = ctx;
  const id = opts.id ?? config.workerId ?? newWorkerId();
  const log = logger.child({ workerId: id });
  const stats = new SystemStats();
  let epoch = 0;
  /** The deployment's generation (test:generation) the epoch belongs to; null: none seen yet. */
  let generation: string | null = null;
  let session: UsersSession | undefined;
  /** With `threads`: the thread the users of the next test run in (a new one once a stop had to terminate it). */
  let thread: UserThread | undefined;
  const userThread = () => (!thread || thread.exited ? (thread = new UserThread(ctx, id)) : thread);
  let blocking: BlockingConnection | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let loop: Promise<void> | undefined;
  let stopping = false;
  /** Users of the command batch being handled that add_user commands gave: they start together. */
  const adding: number[] = [];
  /** When a heartbeat last got Redis's answer (performance.now()). */
  let answeredAt = performance.now();
  let beating = false;
  /** Redis stopped answering (said once, until it answers again). */
  let silentSince: number | undefined;
  /** The running test's length from its first users (start_test's run_ms), and when to stop them without a stop_test. */
  let runMs: number | undefined;
  let stopBy: number | undefined;
  /** The last test this worker ran, and the HTTP requests it recorded: in every heartbeat, for the orchestrator's accounting. */
  let tally: { epoch: number; requests: number; writer: string } | undefined;

  const statusKey = keys.workerStatus({ workerId: id });
  const now = () => (clock.now() / 1000).toFixed(3);

  /** The status hash's fields for the last test's count (none before a test ended). */
  const tallyFields = () => (tally?.writer ? ['requests', tally.requests, 'requests_epoch', tally.epoch, 'requests_writer', tally.writer] : []);

  async function beat(): Promise<void> {
    const status = session ? 'running' : 'idle';
    const accounted = tallyFields();
    const replies = await backend.multi([
      ['HSET', statusKey, 'status', status, 'last_heartbeat', now(), ...Object.entries(stats.sample()).flat(), 'epoch', epoch, 'host', hostname(), ...accounted],
      ['EXPIRE', statusKey, Math.ceil(Math.max(60, config.deadAfter * 10))],
      ['SADD', keys.workers(), id],
      ['GET', keys.generation()],
      ['GET', keys.testEpoch()],
    ]);
    answeredAt = performance.now();
    if (silentSince !== undefined) {
      log.warn('Redis answers again', { silentS: Math.round((answeredAt - silentSince) / 100) / 10, running: session !== undefined });
      silentSince = undefined;
    }
    if (generation !== null && replies[3] !== generation) {
      await stateLost(replies[3] as string | null, Number(replies[4] ?? 0));
      return;
    }
    if (replies[2] === 1 && session) {
      // Not a member any more: the orchestrator took us for dead and gave our users to others.
      log.warn('dropped by the orchestrator while running a test: stopping its users', { epoch });
      await endSession();
    }
  }

  /**
   * A heartbeat with what the test's users recorded, retried while Redis may come back (a failover): the
   * acknowledgement that follows tells the orchestrator the count is there to read.
   */
  async function beatBeforeAcknowledging(): Promise<void> {
    const giveUpAt = performance.now() + config.redisLostAfter * 1000;
    for (;;) {
      try {
        return await beat();
      } catch (err) {
        if (stopping || performance.now() > giveUpAt) throw err;
        log.warn('writing the final count failed; retrying', { error: (err as Error).message });
        await clock.sleep(500, ctx.signal);
      }
    }
  }

  /** The running test's users stopped (grace period, last metrics written), and what they recorded kept for the accounting. */
  async function endSession(interrupt = false): Promise<UsersSession | undefined> {
    const old = session;
    session = undefined;
    stopBy = undefined;
    if (!old) return undefined;
    if (interrupt) old.interrupt();
    await old.stop();
    tally = { epoch: old.epoch, requests: old.requests, writer: old.writer };
    return old;
  }

  /**
   * Each heartbeatInterval: a heartbeat (one at a time: a heartbeat Redis holds
   * is not piled on), and the bounds of a test nobody may be able to stop:
   * Redis silent for redisLostAfter, or the test's planned end and a grace passed.
   */
  function watch(): void {
    const at = performance.now();
    const silentMs = at - answeredAt;
    if (silentMs > config.heartbeatInterval * 2000 && silentSince === undefined) {
      silentSince = answeredAt;
      const users = session ? `: this worker stops the users of test ${session.epoch} by itself if it does not answer within ${config.redisLostAfter} s` : '';
      log.warn(`Redis does not answer${users}`, { silentS: Math.round(silentMs / 100) / 10 });
    }
    if (session && silentMs > config.redisLostAfter * 1000) {
      void stopOnItsOwn(`Redis has not answered for ${Math.round(silentMs / 1000)} s (load-test.redisLostAfter ${config.redisLostAfter} s)`);
    } else if (session && stopBy !== undefined && at > stopBy) {
      void stopOnItsOwn(`the test's planned end and ${(config.gracefulStop * 1000 + STOP_TEST_GRACE_MS) / 1000} s have passed with no stop_test`);
    }
    if (beating) return;
    beating = true;
    beat()
      .catch((err: unknown) => log.warn('heartbeat failed', { error: (err as Error).message }))
      .finally(() => (beating = false));
  }

  async function stopOnItsOwn(why: string): Promise<void> {
    const running = session;
    if (!running) return;
    log.error(`${why}: stopping this worker's users`, { epoch: running.epoch });
    await endSession(true);
    log.info('test stopped', { epoch: running.epoch, requests: running.recorded, by: 'the worker itself' });
  }

  /**
   * The coordination state this worker's epoch belongs to is gone (Redis
   * restarted empty, or was flushed): the test it ran cannot be finished, so
   * its users stop, and the epochs of the new generation count from here.
   */
  async function stateLost(current: string | null, currentEpoch: number): Promise<void> {
    log.warn('the coordination state is gone (Redis restarted empty?): following the new epochs', { epoch, newEpoch: currentEpoch, running: session !== undefined });
    generation = current;
    epoch = Math.min(epoch, currentEpoch);
    await endSession();
  }

  async function handle_(env: Envelope): Promise<void> {
    if (env.epoch < epoch) {
      const [current, currentEpoch] = (await backend.pipeline([['GET', keys.generation()], ['GET', keys.testEpoch()]])) as (string | null)[];
      if (current === generation) {
        log.info('stale command ignored', { type: env.type, commandEpoch: env.epoch, epoch, commandId: env.command_id });
        return;
      }
      await stateLost(current, Number(currentEpoch ?? 0));
      if (env.epoch < epoch) return;
    }
    switch (env.type) {
      case 'start_test': {
        await endSession();
        epoch = env.epoch;
        generation = ((await backend.send(['GET', keys.generation()])) as string | null) ?? generation;
        const payload = env.payload as unknown as StartPayload;
        runMs = typeof payload.run_ms === 'number' && payload.run_ms > 0 ? payload.run_ms : undefined;
        tally = undefined;
        const path = config.scenario ?? payload.scenario;
        session = opts.threads ? await userThread().session(epoch, path, payload) : new TestSession(ctx, id, epoch, await loadScenario(path), payload);
        log.info('test started', { epoch, scenario: path, mode: session.mode });
        await beat();
        break;
      }
      case 'add_user':
      case 'remove_user': {
        if (!session || env.epoch !== session.epoch) {
          log.warn('command for a test this worker has not started', { type: env.type, commandEpoch: env.epoch });
          return;
        }
        const user = Number(env.payload.user_id);
        if (typeof env.payload.target_users === 'number') session.targetUsers = env.payload.target_users;
        if (env.type === 'add_user') adding.push(user); // started with the batch's other new users (startAdded)
        else void session.removeUser(user).catch((err: unknown) => log.warn('user did not stop cleanly', { user, error: (err as Error).message }));
        break;
      }
      case 'set_rate': {
        if (!session || env.epoch !== session.epoch) return;
        const rate = Number((env.payload as unknown as SetRatePayload).rate);
        // The session reads its payload's rate at each scheduler tick.
        if (Number.isFinite(rate) && rate >= 0) session.setRate(rate);
        break;
      }
      case 'stop_test': {
        epoch = Math.max(epoch, env.epoch);
        const old = await endSession();
        if (old) log.info('test stopped', { epoch, requests: old.recorded });
        // a worker that ran none of this test says so: the orchestrator takes a missing count for lost metrics
        if (tally?.epoch !== env.epoch) tally = { epoch: env.epoch, requests: 0, writer: 'none' };
        await beatBeforeAcknowledging();
        break;
      }
    }
  }

  async function startAdded(): Promise<void> {
    const ids = adding.splice(0);
    if (!ids.length || !session) return;
    // The test's planned length counts from its first users (the orchestrator's clock starts before them).
    if (runMs !== undefined && stopBy === undefined) stopBy = performance.now() + runMs + config.gracefulStop * 1000 + STOP_TEST_GRACE_MS;
    await session.addUsers(ids).catch((err: unknown) => log.error('users not recorded as running', { users: ids.length, error: (err as Error).message }));
  }

  async function readCommands(): Promise<void> {
    const streamKey = keys.workerCommands({ workerId: id });
    const ackKey = keys.workerAck({ workerId: id });
    let last = ((await backend.send(['GET', ackKey])) as string | null) ?? '0-0';
    while (!stopping) {
      let reply: Reply;
      try {
        reply = await blocking!.send(['XREAD', 'COUNT', 100, 'BLOCK', 1000, 'STREAMS', streamKey, last]);
      } catch (err) {
        if (stopping) return;
        log.warn('reading commands failed; retrying', { error: (err as Error).message });
        await clock.sleep(1000, ctx.signal).catch(() => {});
        continue;
      }
      const entries = ((reply as [string, [string, string[]][]][] | null)?.[0]?.[1]) ?? [];
      if (!entries.length) continue;
      for (const [entryId, fields] of entries) {
        const env = decodeEnvelope(entryId, fields);
        if (!env) log.warn('not a command envelope: skipped', { entryId });
        else {
          try {
            if (env.type !== 'add_user') await startAdded(); // before what comes next (a removal, a stop) is done
            await handle_(env);
          } catch (err) {
            log.error('command failed', { type: env.type, epoch: env.epoch, error: (err as Error).message });
          }
        }
      }
      // One acknowledgement for the batch, once every command in it is done (a worker restarted before
      // it, under the same id, handles the batch again).
      await startAdded();
      last = entries.at(-1)![0];
      await backend.send(['SET', ackKey, last, 'EX', Math.ceil(Math.max(60, config.deadAfter * 10))]);
    }
  }

  return {
    id,
    session: () => session,
    interrupt: () => session?.interrupt(),
    async start() {
      const [known, current] = (await backend.pipeline([['GET', keys.generation()], ['GET', keys.testEpoch()]])) as (string | null)[];
      generation = known ?? null;
      epoch = Number(current ?? 0);
      if (opts.threads) userThread(); // warm before a test comes
      await beat();
      blocking = await backend.blocking();
      heartbeat = setInterval(watch, config.heartbeatInterval * 1000);
      loop = readCommands();
      log.info('worker registered', { epoch });
    },
    async stop(reason) {
      stopping = true;
      clearInterval(heartbeat);
      const wasRunning = session !== undefined;
      await endSession();
      await blocking?.close().catch(() => {});
      // The loop may be writing an acknowledgement Redis holds: a stop does not wait for it long.
      await within(loop ?? Promise.resolve(), REDIS_STEP_MS, 'the command loop').catch(() => {});
      await thread?.terminate();
      if (wasRunning) {
        // Mid-test: leave the membership to the orchestrator, which reassigns our users now and reads our count.
        await within(backend.send(['HSET', statusKey, 'status', 'dead', 'last_heartbeat', now(), ...tallyFields()]), REDIS_STEP_MS, 'leaving').catch(() => {});
      } else {
        const leave = backend.multi([
          ['SREM', keys.workers(), id],
          ['DEL', statusKey, keys.workerCommands({ workerId: id }), keys.workerAck({ workerId: id }), keys.workerUsers({ workerId: id }), keys.workerActiveUsers({ workerId: id })],
        ]);
        await within(leave, REDIS_STEP_MS, 'leaving').catch(() => {});
      }
      log.info('worker left', { reason });
    },
  };
}
