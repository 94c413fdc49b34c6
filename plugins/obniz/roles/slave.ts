// The slave: runs one worker per device of its distribution list
// (workers:{name}). It beats (slave:{name}:heartbeat), listens on `app` and
// `app.{name}` like an SDK slave, and on `synchronize` reads its list and
// starts, restarts or stops workers. Beyond the SDK: it starts a worker only
// while it holds the device's claim (so a moved device never runs on two
// slaves), calls onInstall/onUninstall, stops its workers itself when it can
// no longer confirm its heartbeat (before the key can expire and the devices
// move), starts them again as soon as a beat is confirmed, and on a clean stop
// hands its devices over at once. Many slaves may share a process and its
// connections (slave-host.ts): they are given their name and the process's
// pub/sub connection.
import type { Command } from '../../../entries/plugin.ts';
import { fenceAfterMs, instanceNameOf } from '../config.ts';
import type { DeviceClass } from '../device-class.ts';
import { eachLimited, Loop } from '../loop.ts';
import { channelFor, envelope, forSlave, type Envelope } from '../messages.ts';
import { ObnizScriptError } from '../errors.ts';
import { findDevice, indexedSlaves, readList } from '../fleet.ts';
import { handOver } from '../hand-over.ts';
import { claimDevices, releaseDevices, touchSlave } from '../scripts.ts';
import { SlaveChannels } from '../slave-channels.ts';
import { checkNamesAreFree, loadSlaveSetup, releaseStaleClaims, type SlaveSetup } from '../slave-start.ts';
import { sameInstall, type DeviceInfo } from '../values.ts';
import { WorkerHost, type WorkerFactory } from '../worker-host.ts';
import type { Ctx } from '../context.ts';

export interface SlaveOptions {
  /** Its instance name (default: the config's instanceName, else hostname-pid). */
  name?: string;
  /** The process's shared pub/sub connection (default: one of its own). */
  channels?: SlaveChannels;
}

type StopReason = 'removed' | 'changed' | 'shutdown' | 'fenced';

export class Slave {
  readonly name: string;
  private readonly hosts = new Map<string, WorkerHost>();
  /** Devices in our list whose claim another alive slave still holds: obnizId → holder. */
  private readonly pending = new Map<string, string>();
  /** Devices whose worker failed to start: not retried before this time (ms) unless their install changes. */
  private readonly failed = new Map<string, { until: number; install: DeviceInfo }>();
  private readonly nudged = new Map<string, number>();
  private readonly syncLoop: Loop;
  private readonly heartbeatLoop: Loop;
  private readonly fenceLoop: Loop;
  private readonly channels: SlaveChannels;
  /** Whether the pub/sub connection is this slave's own (closed at its stop) rather than its process's. */
  private readonly ownChannels: boolean;
  private create?: WorkerFactory;
  private deviceClass?: DeviceClass;
  /** When the last heartbeat write that Redis confirmed was sent (ms): the key lives at least heartbeatTtl from then. */
  private lastBeatSent = 0;
  /** The error of the heartbeat writes failing now (logged once per outage). */
  private beatError?: string;
  private fenced = false;
  /** The fence's stops and claim release, which a resume waits for. */
  private fencing: Promise<void> = Promise.resolve();
  private stopping = false;
  /** Redis was unreachable: claims may be gone (a restarted Redis) and are written again before the next sync. */
  private reassert = false;
  private unlistenState?: () => void;

  constructor(private readonly ctx: Ctx, opts: SlaveOptions = {}) {
    this.name = opts.name ?? instanceNameOf(ctx.config);
    this.ownChannels = !opts.channels;
    this.channels = opts.channels ?? new SlaveChannels(ctx.backend, ctx.global.redis.keyPrefix);
    const { clock, logger, config } = ctx;
    this.syncLoop = new Loop({ name: 'slave sync', clock, logger, intervalMs: config.syncInterval * 1000, run: () => this.sync() });
    this.heartbeatLoop = new Loop({ name: 'slave heartbeat', clock, logger, intervalMs: config.heartbeatInterval * 1000, run: () => this.beat() });
    this.fenceLoop = new Loop({ name: 'slave fence', clock, logger, intervalMs: 1000, run: () => this.fence() });
  }

  /** Workers running now (started), by obnizId. */
  running(): string[] {
    return [...this.hosts.values()].filter((h) => h.state === 'started').map((h) => h.obnizId);
  }

  /** Workers of this slave (started, starting or stopping). */
  get size(): number {
    return this.hosts.size;
  }

  async start(): Promise<void> {
    const { ctx } = this;
    const setup = await loadSlaveSetup(ctx);
    await checkNamesAreFree(ctx, [this.name]);
    await releaseStaleClaims(ctx, [this.name]);
    try {
      await this.join(setup);
    } catch (err) {
      await this.stop('failed to start').catch(() => {});
      throw err;
    }
    ctx.logger.info('slave running', { instanceName: this.name, workers: this.hosts.size, waiting: this.pending.size });
  }

  /**
   * Subscribes, beats and runs the first sync (start's part that leaves traces
   * in Redis), once its process has checked the name and given stale claims back.
   */
  async join(setup: SlaveSetup): Promise<void> {
    const { ctx } = this;
    this.create = setup.create;
    this.deviceClass = setup.deviceClass;
    await this.channels.join(this.name, (message) => void this.onMessage(message));

    this.unlistenState = ctx.backend.onState((state) => {
      if (state === 'reconnecting') this.reassert = true;
      if (state === 'ready' && this.reassert) {
        this.heartbeatLoop.wake();
        this.syncLoop.wake();
      }
    });
    await this.beat(true);
    this.heartbeatLoop.start(ctx.config.heartbeatInterval * 1000);
    this.fenceLoop.start();
    await this.sync();
    this.syncLoop.start(this.pending.size ? ctx.config.claimRetryInterval * 1000 : ctx.config.syncInterval * 1000);
  }

  async stop(reason: string): Promise<void> {
    await this.halt();
    if (this.ownChannels) await this.channels.close();
    await handOverAndTell(this.ctx, [this.name], reason);
  }

  /** Stops listening, syncing and every worker, then beating: all but handing the devices over. */
  async halt(): Promise<void> {
    this.stopping = true;
    this.unlistenState?.();
    await this.syncLoop.stop();
    await this.fenceLoop.stop();
    await this.channels.leave(this.name);
    await this.stopAll();
    await this.heartbeatLoop.stop();
  }

  /** One sync: read our list; stop, restart and start workers to match it. Returns the delay to the next one. */
  async sync(): Promise<number> {
    const { ctx } = this;
    const idle = ctx.config.syncInterval * 1000;
    if (this.stopping || this.fenced) return idle;
    if (this.reassert) await this.reassertClaims();
    const list = await readList(ctx, this.name);
    const now = ctx.clock.now();
    const limit = ctx.config.startConcurrency;

    const removed = [...this.hosts.keys()].filter((id) => !list.has(id));
    for (const id of this.pending.keys()) if (!list.has(id)) this.pending.delete(id);
    for (const id of this.failed.keys()) if (!list.has(id)) this.failed.delete(id);
    await eachLimited(removed, limit, (id) => this.stopWorker(id, 'removed'));

    const changed = [...this.hosts.values()].filter((h) => !sameInstall(h.install, list.get(h.obnizId)!.install)).map((h) => h.obnizId);
    await eachLimited(changed, limit, async (id) => {
      await this.stopWorker(id, 'changed');
      await this.startWorker(list.get(id)!.install, false);
    });

    const wanted = [...list.keys()].filter((id) => {
      if (this.hosts.has(id)) return false;
      const failure = this.failed.get(id);
      return !failure || failure.until <= now || !sameInstall(failure.install, list.get(id)!.install);
    });
    const starts: { install: DeviceInfo; fresh: boolean }[] = [];
    for (const claim of wanted.length ? await claimDevices(ctx, this.name, wanted) : []) {
      if (claim.status === 'ok') {
        this.pending.delete(claim.obnizId);
        starts.push({ install: list.get(claim.obnizId)!.install, fresh: claim.fresh });
        if (claim.holder && claim.holder !== this.name) ctx.logger.info('took over a device from a dead slave', { obnizId: claim.obnizId, from: claim.holder });
      } else if (claim.status === 'wait') {
        this.pending.set(claim.obnizId, claim.holder);
        await this.nudge(claim.holder);
      } else {
        this.pending.delete(claim.obnizId);
      }
    }
    await eachLimited(starts, limit, ({ install, fresh }) => this.startWorker(install, fresh));

    if (removed.length || changed.length || starts.length) {
      ctx.logger.info('synchronized', { started: starts.length, restarted: changed.length, stopped: removed.length, waiting: this.pending.size, running: this.hosts.size });
    }
    return this.pending.size ? ctx.config.claimRetryInterval * 1000 : idle;
  }

  private async startWorker(install: DeviceInfo, fresh: boolean): Promise<void> {
    const { ctx } = this;
    // A sync that waited on Redis past the lease (a pause) must not start what the fence stopped: the claim goes back.
    if (!this.mayRun()) {
      await releaseDevices(ctx, this.name, [install.id]).catch(() => {});
      return;
    }
    const host = new WorkerHost(install, {
      instanceName: this.name,
      logger: ctx.logger,
      clock: ctx.clock,
      create: this.create!,
      loopIntervalMs: ctx.config.loopInterval * 1000,
      hookTimeoutMs: ctx.config.hookTimeout * 1000,
      closeTimeoutMs: ctx.config.closeTimeout * 1000,
      deviceClass: this.deviceClass,
      deviceOptions: { ...ctx.config.obnizOptions, ...(ctx.config.appToken ? { access_token: ctx.config.appToken } : {}) },
    });
    this.hosts.set(install.id, host);
    if (await host.start(fresh)) {
      this.failed.delete(install.id);
      ctx.logger.debug('worker started', { obnizId: install.id, fresh });
      return;
    }
    this.hosts.delete(install.id);
    this.failed.set(install.id, { until: ctx.clock.now() + ctx.config.syncInterval * 1000, install });
    await releaseDevices(ctx, this.name, [install.id]).catch(() => {});
  }

  private async stopWorker(obnizId: string, reason: StopReason): Promise<void> {
    const { ctx } = this;
    const host = this.hosts.get(obnizId);
    if (!host) return;
    // Still listed while asking Redis, so a fence meanwhile stops it without waiting for Redis.
    const uninstall = reason === 'removed' && (await this.uninstalled(obnizId));
    if (this.hosts.get(obnizId) !== host) return;
    this.hosts.delete(obnizId);
    await host.stop(uninstall);
    ctx.logger.debug('worker stopped', { obnizId, reason, uninstall });
    // A restart keeps the claim; otherwise it goes back so the device's new slave may start it
    // (at a shutdown all go back together, stopAll).
    if (reason !== 'changed' && reason !== 'shutdown') {
      await releaseDevices(ctx, this.name, [obnizId]).catch((err: unknown) => ctx.logger.warn('could not give a claim back', { obnizId, error: (err as Error).message }));
    }
  }

  /**
   * Whether a device that left this slave's list was removed from the fleet
   * (onUninstall) rather than moved: a coord manager marks removals; an
   * obniz-app-sdk manager marks nothing, so a device the device index still
   * puts here (this slave claimed it) that is in no list any more counts as
   * removed too (the SDK moves a device in one script, so a moved one is in its
   * new list by now). After Redis restarted empty the index is empty: lists
   * that vanished with it uninstall nothing.
   */
  private async uninstalled(obnizId: string): Promise<boolean> {
    const { ctx } = this;
    if ((await ctx.backend.send(['SREM', ctx.keys.uninstalls(), obnizId])) === 1) return true;
    if ((await ctx.backend.send(['HGET', ctx.keys.deviceIndex(), obnizId])) !== this.name) return false;
    const owner = await findDevice(ctx, obnizId, await indexedSlaves(ctx));
    if (owner) return false;
    await ctx.backend.send(['HDEL', ctx.keys.deviceIndex(), obnizId]);
    return true;
  }

  /**
   * At a shutdown: every worker stops, then their claims go back in one script call
   * (one a device made a 5,000-slave process's stop take seconds); no other slave
   * could start them before the devices are handed over anyway.
   */
  private async stopAll(): Promise<void> {
    const { ctx } = this;
    const ids = [...this.hosts.keys()];
    await eachLimited(ids, ctx.config.startConcurrency, (id) => this.stopWorker(id, 'shutdown'));
    await releaseDevices(ctx, this.name, ids).catch((err: unknown) => ctx.logger.warn('could not give the claims back', { devices: ids.length, error: (err as Error).message }));
  }

  /** ms left before the workers must have stopped: fenceAfterMs after the last confirmed beat was sent. */
  private leaseLeft(): number {
    return this.lastBeatSent + fenceAfterMs(this.ctx.config) - this.ctx.clock.now();
  }

  /** Whether workers may start now: not stopping, not fenced, and the heartbeat confirmed recently enough. */
  private mayRun(): boolean {
    return !this.stopping && !this.fenced && this.leaseLeft() > 0;
  }

  /**
   * One heartbeat; returns the delay to the next. The next one is due an
   * interval after this one was sent (at once when this one took that long,
   * as in a pause), and a failed one is tried again within a second, not an
   * interval later: a failover of a few seconds must not outlast the lease.
   */
  private async beat(strict = false): Promise<number> {
    const { ctx } = this;
    const intervalMs = ctx.config.heartbeatInterval * 1000;
    if (this.stopping) return intervalMs;
    const sentAt = ctx.clock.now();
    try {
      await touchSlave(ctx, this.name);
    } catch (err) {
      this.reassert = true;
      if (strict) throw err;
      const error = (err as Error).message;
      if (this.beatError === undefined) ctx.logger.warn('cannot write the heartbeat: trying again every second', { error, leftMs: Math.max(0, this.leaseLeft()) });
      this.beatError = error;
      return Math.min(1000, intervalMs / 4);
    }
    this.lastBeatSent = Math.max(this.lastBeatSent, sentAt);
    if (this.beatError !== undefined) {
      this.beatError = undefined;
      ctx.logger.info('heartbeat written again');
    }
    if (this.fenced && this.leaseLeft() > 0) void this.resume();
    return Math.max(0, sentAt + intervalMs - ctx.clock.now());
  }

  /**
   * Stops every worker once no heartbeat write has been confirmed for
   * fenceAfterMs (18 s with the defaults) since it was sent: from heartbeatTtl
   * after it (20 s), the key may be gone, a manager may move the devices and
   * another slave start them. Runs again at that deadline, not on a coarse tick
   * (a tick a second per slave was most of an idle 5,000-slave process's CPU).
   */
  private async fence(): Promise<number> {
    const { clock, logger } = this.ctx;
    if (this.fenced || this.stopping || this.lastBeatSent === 0) return 1000;
    const left = this.leaseLeft();
    if (left > 0) return left;
    this.fenced = true;
    logger.error('no heartbeat written for too long: stopping every worker before the devices can move to other slaves', {
      sinceMs: clock.now() - this.lastBeatSent,
      boundMs: fenceAfterMs(this.ctx.config),
      workers: this.hosts.size,
    });
    this.fencing = this.stopFenced();
    await this.fencing;
    return 1000;
  }

  /**
   * The fence's stop: every worker at once, with no Redis call before its
   * onEnd (Redis may not answer); the claims go back afterwards, when Redis
   * takes the call (a resume waits for that, so its claims come after).
   */
  private async stopFenced(): Promise<void> {
    const hosts = [...this.hosts.values()];
    this.hosts.clear();
    this.pending.clear();
    await Promise.all(hosts.map((h) => h.stop(false)));
    this.ctx.logger.info('stopped every worker', { workers: hosts.length });
    await releaseDevices(this.ctx, this.name, hosts.map((h) => h.obnizId)).catch(() => {});
  }

  /** A beat confirmed after the fence: once its stops are done, a sync starts the workers again at once. */
  private async resume(): Promise<void> {
    await this.fencing;
    if (!this.fenced || this.leaseLeft() <= 0 || this.stopping) return;
    this.fenced = false;
    this.ctx.logger.info('heartbeat written again: resuming workers');
    this.syncLoop.wake();
  }

  /**
   * After Redis was unreachable (perhaps restarted empty), the claims of the
   * workers still running here are written again before anything else, so no
   * other slave starts them before this one has stopped them. A claim another
   * slave took meanwhile means the device may run there: ours stops at once.
   */
  private async reassertClaims(): Promise<void> {
    const { ctx } = this;
    const ids = this.running();
    this.reassert = false;
    if (!ids.length) return;
    const claims = ctx.keys.claims();
    await ctx.backend.pipeline(ids.map((id): Command => ['HSETNX', claims, id, this.name]));
    const holders = (await ctx.backend.send(['HMGET', claims, ...ids])) as (string | null)[];
    const lost = ids.filter((_id, i) => holders[i] !== this.name);
    if (lost.length) ctx.logger.error('devices claimed by another slave while Redis was unreachable: stopping them here', { devices: lost });
    await eachLimited(lost, ctx.config.startConcurrency, (id) => this.stopWorker(id, 'fenced'));
  }

  private async onMessage(message: Envelope): Promise<void> {
    if (!forSlave(message, this.name) || this.stopping) return;
    try {
      if (message.action === 'synchronize') this.syncLoop.wake();
      else if (message.action === 'keyRequest') await this.answerKeyRequest(message);
      else if (message.action === 'reportRequest') {
        await this.publish(envelope('report', this.name, { installIds: this.running() }, { name: message.info.from, toManager: true }));
      }
    } catch (err) {
      this.ctx.logger.warn(`could not handle ${message.action}`, { from: message.info.from, error: (err as Error).message });
    }
  }

  private async answerKeyRequest(message: Envelope): Promise<void> {
    const { requestId, key, obnizId } = message.body as { requestId?: unknown; key?: unknown; obnizId?: unknown };
    if (typeof requestId !== 'string' || typeof key !== 'string') return;
    const targets = typeof obnizId === 'string' ? [this.hosts.get(obnizId)].filter((h) => h !== undefined) : [...this.hosts.values()];
    const results: Record<string, string> = {};
    await eachLimited(targets, this.ctx.config.startConcurrency, async (host) => {
      if (host.state === 'started') results[host.obnizId] = await host.request(key);
    });
    await this.publish(envelope('keyRequestResponse', this.name, { requestId, results }, { name: message.info.from, toManager: true }));
  }

  /** Asks the slave still holding a claim to synchronize now (at most every 2 s per holder). */
  private async nudge(holder: string): Promise<void> {
    const now = this.ctx.clock.now();
    if (now - (this.nudged.get(holder) ?? 0) < 2000) return;
    this.nudged.set(holder, now);
    await this.publish(envelope('synchronize', this.name, { syncType: 'redis' }, { name: holder, toManager: false }));
  }

  private async publish(message: Envelope): Promise<void> {
    await this.ctx.backend.send(['PUBLISH', channelFor(message, this.ctx.global.redis.keyPrefix, 'slave'), JSON.stringify(message)]);
  }
}

/**
 * Stopped slaves hand their devices to the other alive slaves now rather than
 * after their heartbeats expire, and one `synchronize` tells the receivers.
 */
export async function handOverAndTell(ctx: Ctx, names: readonly string[], reason: string): Promise<void> {
  try {
    const moved = await handOver(ctx, names);
    if (!moved) return;
    const message = envelope('synchronize', names[0]!, { syncType: 'redis' });
    await ctx.backend.send(['PUBLISH', channelFor(message, ctx.global.redis.keyPrefix, 'slave'), JSON.stringify(message)]);
    ctx.logger.info('handed devices over', { devices: moved, reason, ...(names.length > 1 ? { slaves: names.length } : {}) });
  } catch (err) {
    // With no other slave alive (a standalone process, or the last slave), the lists wait for the next one.
    const lone = err instanceof ObnizScriptError && err.sdkCode === 'NO_ACCEPTABLE_WORKER';
    ctx.logger[lone ? 'debug' : 'warn']('devices stay assigned until a manager relocates them', { error: (err as Error).message });
  }
}
