// The manager: reads the installed-device list (at start, every syncInterval,
// when the file changes, on a webhook call), writes the distribution lists
// workers:{slave} through the assignment scripts and sends `synchronize`;
// checks the slaves' heartbeats every healthCheckInterval and moves the
// devices of dead ones; answers app.request / directRequest. Several managers
// may run (and SDK managers beside them): every change is one atomic script.
import { ModuleLoadError, type Role, UsageError } from '../../../entries/plugin.ts';
import { instanceNameOf } from '../config.ts';
import { discover, Discovery } from '../discover.ts';
import { DeviceListError, InstanceError, ObnizScriptError } from '../errors.ts';
import { slaveStates } from '../fleet.ts';
import { diffList, ReadDiff } from '../diff.ts';
import { COLLECT_FROM, collectGarbage } from '../collect.ts';
import { concat, pick, toDeviceList, type DeviceList, type DeviceTexts } from '../device-list.ts';
import { listFingerprint } from '../fingerprint.ts';
import { FULL_READ_EVERY, ListCache, type ListIndex, type ListLook } from '../list-cache.ts';
import { Loop } from '../loop.ts';
import { channelFor, envelope, type Envelope } from '../messages.ts';
import { KeyRequester } from '../requests.ts';
import { deviceSource, type DeviceSource } from '../sources/source.ts';
import { relocateDeadSlaves } from '../hand-over.ts';
import { relocateAll, relocateDevice } from '../relocate.ts';
import { assignEach, removeDevices, touchManager, updateDevices } from '../scripts.ts';
import type { DeviceInfo } from '../values.ts';
import { startWebhook, type Webhook } from '../webhook.ts';
import { AddStream, AssignTally } from '../stream-adds.ts';
import type { Ctx } from '../context.ts';

export function managerRole(ctx: Ctx): Role & { manager: Manager } {
  const manager = new Manager(ctx);
  return { manager, start: () => manager.start(), stop: () => manager.stop() };
}

/** Removals of at most this many devices are never refused by the maxRemoveShare guard (a small fleet may empty its list). */
export const MASS_REMOVAL_FLOOR = 5;

export interface SyncResult {
  added: number;
  updated: number;
  removed: number;
  /** Devices that could not be assigned: no slave is alive. */
  waiting: number;
}

export class Manager {
  readonly name: string;
  private readonly source?: DeviceSource;
  private readonly requester: KeyRequester;
  private readonly syncLoop: Loop;
  private readonly healthLoop: Loop;
  private readonly heartbeatLoop: Loop;
  private readonly discoverLoop: Loop;
  private readonly discovery: Discovery;
  private readonly lists: ListCache;
  private unwatch?: () => void;
  private webhook?: Webhook;
  private firstManager?: boolean;
  private unlistenState?: () => void;
  /** The last error logged per kind, so a repeating failure is one line until it changes. */
  private readonly lastError = new Map<string, string>();
  /** Syncs so far: every FULL_READ_EVERY-th reads every list in full and diffs, whatever the stamps say. */
  private syncs = 0;
  /** The list as last applied in full (the source's version, the list's fingerprint): a sync that finds it and the lists unchanged does nothing. */
  private applied?: { version?: string; list: number };
  lastSync?: SyncResult;

  constructor(private readonly ctx: Ctx) {
    this.name = instanceNameOf(ctx.config);
    const { clock, logger, config } = ctx;
    this.source = deviceSource({ config, logger, clock });
    this.requester = new KeyRequester(ctx, this.name);
    this.requester.onManagerMessage = (m) => this.onManagerMessage(m);
    this.syncLoop = new Loop({ name: 'manager sync', clock, logger, intervalMs: config.syncInterval * 1000, run: () => this.syncOnce() });
    this.healthLoop = new Loop({ name: 'manager health check', clock, logger, intervalMs: config.healthCheckInterval * 1000, run: () => this.healthCheck() });
    this.heartbeatLoop = new Loop({ name: 'manager heartbeat', clock, logger, intervalMs: config.heartbeatInterval * 1000, run: () => this.beat() });
    this.discovery = new Discovery(ctx);
    this.discoverLoop = new Loop({ name: 'manager discovery', clock, logger, intervalMs: config.discoverInterval * 1000, run: () => this.discovery.step() });
    this.lists = new ListCache(ctx);
  }

  /** Whether no other manager was alive when this one started (obniz-app-sdk's app.isFirstManager()). */
  isFirstManager(): boolean {
    if (this.firstManager === undefined) {
      throw new InstanceError('isFirstManager(): the manager has not written its first heartbeat yet (await start())', { code: 'COORD_ERR_OBNIZ_NOT_STARTED' });
    }
    return this.firstManager;
  }

  /** Starts and resolves once the first heartbeat and sync are done (obniz-app-sdk's startWait()). */
  async start(): Promise<void> {
    try {
      await this.join();
    } catch (err) {
      await this.stop().catch(() => {});
      throw err;
    }
    this.ctx.logger.info('manager running', {
      instanceName: this.name,
      firstManager: this.firstManager,
      source: this.source?.description ?? 'none',
      ...(this.webhook ? { webhook: this.webhook.url } : {}),
    });
  }

  private async join(): Promise<void> {
    const { ctx } = this;
    await this.requester.start();
    // obniz-app-sdk managers are found before the first heartbeat counts the others (isFirstManager)
    if (ctx.config.discover) await discover(ctx);
    await this.beat();
    // A list that cannot be parsed or a module that does not load is the user's to fix now: the start fails with it.
    const delay = await this.syncOnce({ throwBadList: true });
    this.heartbeatLoop.start(ctx.config.heartbeatInterval * 1000);
    this.healthLoop.start(ctx.config.healthCheckInterval * 1000);
    if (ctx.config.discover) this.discoverLoop.start(ctx.config.discoverInterval * 1000);
    this.syncLoop.start(delay);
    this.unwatch = this.source?.watch?.(() => this.syncLoop.wake());
    if (ctx.config.webhook) this.webhook = await startWebhook(ctx, this);
    // Redis back after an outage (perhaps restarted empty): sync again once the slaves have beaten and re-claimed.
    let lost = false;
    this.unlistenState = ctx.backend.onState((state) => {
      if (state === 'reconnecting') lost = true;
      if (state === 'ready' && lost) {
        lost = false;
        // a whole discovery pass first: obniz-app-sdk slaves must be indexed again to get their devices back
        void (async () => {
          await ctx.clock.sleep(ctx.config.heartbeatInterval * 1000, ctx.signal);
          if (ctx.config.discover) await discover(ctx).catch(() => {});
          this.syncLoop.wake();
        })().catch(() => {});
      }
    });
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    this.unlistenState?.();
    await this.webhook?.close();
    await this.syncLoop.stop();
    await this.healthLoop.stop();
    await this.discoverLoop.stop();
    await this.heartbeatLoop.stop();
    await this.requester.close();
    await this.ctx.backend.send(['DEL', this.ctx.keys.masterHeartbeat({ name: this.name })]).catch(() => {});
  }

  /** Runs a sync now and resolves when it is done (the webhook and tests use it). */
  syncNow(): Promise<void> {
    return this.syncLoop.runSoon();
  }

  /** Every worker's onRequest(key), by obnizId. */
  request(key: string, timeoutMs?: number): Promise<Record<string, string>> {
    return this.requester.request(key, timeoutMs);
  }

  /** One device's onRequest(key). */
  directRequest(obnizId: string, key: string, timeoutMs?: number): Promise<Record<string, string>> {
    return this.requester.directRequest(obnizId, key, timeoutMs);
  }

  /** doAllRelocate: balances the alive slaves to within 1 of each other, then tells them to synchronize. */
  async doAllRelocate(): Promise<{ moved: number; counts: Record<string, number> }> {
    const result = await relocateAll(this.ctx);
    await this.synchronize();
    return result;
  }

  /** obniz-app-sdk's relocation of one device (errors: ObnizScriptError with obniz-app-sdk's codes), then synchronize. */
  async relocate(obnizId: string, force = false): Promise<{ from: string; to: string }> {
    const moved = await relocateDevice(this.ctx, obnizId, force);
    await this.synchronize();
    return moved;
  }

  /** Applies install events directly (a webhook with no device list to re-read). */
  async applyEvents(events: { type: string; device: DeviceInfo }[]): Promise<void> {
    const adds = events.filter((e) => e.type === 'install.create').map((e) => e.device);
    const updates = events.filter((e) => e.type === 'install.update').map((e) => e.device);
    const removes = events.filter((e) => e.type === 'install.delete').map((e) => e.device.id);
    await this.lists.refresh(await this.lists.look());
    const index = this.lists.index();
    const owners = new Map<string, string>();
    for (const id of [...updates.map((d) => d.id), ...removes]) {
      const slot = index.slots.get(id);
      if (slot >= 0) owners.set(id, index.slaves[slot]!);
    }
    this.applied = undefined;
    await this.apply(toDeviceList([...adds, ...updates.filter((d) => !owners.has(d.id))]), toDeviceList(updates.filter((d) => owners.has(d.id))), removes, owners);
    await this.synchronize();
  }

  private async beat(): Promise<void> {
    const others = await touchManager(this.ctx, this.name);
    this.firstManager ??= others === 0;
  }

  /**
   * One sync: the list, diffed against Redis, applied; then `synchronize`. Returns the delay to the next one.
   * With the source's version (a file's size and mtime) or the list's fingerprint as last applied, and every
   * list's stamp and length as last read, nothing is diffed: a sync with nothing changed reads only those.
   */
  private async syncOnce(opts: { throwBadList?: boolean } = {}): Promise<number> {
    const { ctx } = this;
    const retry = ctx.config.syncRetryInterval * 1000;
    if (!this.source) {
      await this.synchronize();
      return ctx.config.syncInterval * 1000;
    }
    const full = this.syncs++ % FULL_READ_EVERY === 0;
    const look = await this.lists.look();
    const quiet = !full && this.applied !== undefined && this.lists.unchanged(look);
    let version: string | undefined;
    let devices: DeviceList | undefined;
    try {
      version = await this.source.version?.();
    } catch (err) {
      return this.listFailed(err, opts.throwBadList);
    }
    const read = !quiet || version === undefined || version !== this.applied?.version;
    // the lists before the list, so that a list read a slice at a time keeps install texts only for the
    // devices new or maybe changed, not for every device (1,000,000 texts are 190 MB)
    let index = read ? await this.indexLists(look, full) : undefined;
    // the diff's first half done as the list is read, and its new devices assigned meanwhile (stream-adds.ts)
    let diff = index && new ReadDiff(index);
    const adds = diff && new AddStream(ctx, diff, (ids) => this.lists.formerSlaves(ids));
    try {
      if (index) devices = this.source.read ? await this.source.read(diff!.check, adds!.slice) : toDeviceList(await this.source.list());
    } catch (err) {
      // the devices assigned before the list turned out bad stay (stream-adds.ts): their slaves are told
      await adds?.abandon();
      if (adds?.tally.added) await this.synchronize().catch(() => {});
      return this.listFailed(err, opts.throwBadList);
    }
    await adds?.end();
    if (this.lastError.delete('list')) ctx.logger.info('device list readable again', { source: this.source.description });
    const streamed = devices !== undefined && adds?.list === devices;
    if (devices && !streamed) {
      // read whole after all (YAML past a JSON-looking start): what was assigned meanwhile is read, and diffed as listed
      if (adds?.list) {
        await this.lists.refresh(await this.lists.look());
        index = this.lists.index();
      }
      diff = ReadDiff.of(devices, index!);
    }
    const list = devices ? listFingerprint(devices.fingerprints) : this.applied!.list;
    if (!devices || (quiet && list === this.applied!.list)) {
      this.applied = { version, list };
      await this.synchronize();
      this.lastSync = { added: 0, updated: 0, removed: 0, waiting: 0 };
      return ctx.config.syncInterval * 1000;
    }
    const count = devices.ids.length;
    // the read's garbage (each item's text and objects) collected before the plan's allocations pile on it
    if (count >= COLLECT_FROM) collectGarbage();
    const { result, complete } = await this.diffAndApply(devices, index!, diff!, streamed ? adds!.tally : undefined);
    devices = undefined; // not kept while the lists are read again below (1,000,000 devices with their texts are 250 MB)
    if (adds) adds.list = undefined;
    diff = undefined;
    index = undefined;
    if (count >= COLLECT_FROM) collectGarbage();
    // the lists this sync wrote are read again now, so the next sync with nothing changed finds them as read
    // (a change another manager made to one of them meanwhile is seen at the next full read)
    if (result.added || result.updated || result.removed) await this.lists.refresh(await this.lists.look());
    if (count >= COLLECT_FROM) collectGarbage();
    this.applied = complete ? { version, list } : undefined;
    await this.synchronize();
    this.lastSync = result;
    if (result.added || result.updated || result.removed) ctx.logger.info('device list applied', { ...result, devices: count });
    return result.waiting ? retry : ctx.config.syncInterval * 1000;
  }

  /** A list that cannot be read: at start the user's to fix (one line, exit 2, nothing assigned); later logged once, the assignments kept. */
  private listFailed(err: unknown, throwBadList = false): number {
    if (throwBadList && (err instanceof DeviceListError || err instanceof ModuleLoadError)) throw new UsageError(err.message, { code: err.code, cause: err });
    this.logOnce('list', `${(err as Error).message}; keeping the current assignments`);
    return this.ctx.config.syncRetryInterval * 1000;
  }

  /** The lists re-read where they moved (all when `full`), indexed for a diff. */
  private async indexLists(look: ListLook, full: boolean): Promise<ListIndex> {
    await this.lists.refresh(look, full);
    return this.lists.index();
  }

  /** The list diffed against the lists as indexed and applied; `complete` when nothing waits or was refused. */
  private async diffAndApply(devices: DeviceList, index: ListIndex, read: ReadDiff, streamed?: AssignTally): Promise<{ result: SyncResult; complete: boolean }> {
    const diff = await diffList(this.ctx, devices, index, read, streamed !== undefined);
    const removes = this.guardRemovals(diff.removes, index.slaves.length);
    const result = await this.apply(diff.adds, diff.updates, removes, diff.owners, true, streamed);
    return { result, complete: !result.waiting && removes.length === diff.removes.length };
  }

  /**
   * A list that would remove more than maxRemoveShare of the assigned devices
   * (and more than MASS_REMOVAL_FLOOR) in one sync is more likely a wrong list
   * (another manager's, a truncated file) than a real decision: its removals are
   * refused, logged, and the rest of the sync applies.
   */
  private guardRemovals(removes: string[], assigned: number): string[] {
    const share = this.ctx.config.maxRemoveShare;
    if (removes.length <= MASS_REMOVAL_FLOOR || removes.length <= share * assigned) {
      if (this.lastError.delete('removal')) this.ctx.logger.info('device removals apply again');
      return removes;
    }
    this.logOnce(
      'removal',
      `the device list would remove ${removes.length} of the ${assigned} assigned devices, more than maxRemoveShare ` +
        `(${share}): refused, the devices stay assigned (check the list; to remove them anyway set obniz.maxRemoveShare=1)`,
    );
    return [];
  }

  /**
   * `owners`: obnizId → slave of the updated and removed devices; `unique`: no id is in adds twice (a checked list);
   * `tally`: the adds already assigned as the list was read.
   */
  private async apply(
    adds: DeviceTexts,
    updates: DeviceTexts,
    removes: string[],
    owners: ReadonlyMap<string, string>,
    unique = false,
    tally = new AssignTally(),
  ): Promise<SyncResult> {
    const { ctx } = this;
    const removed = (await removeDevices(ctx, removes, owners)).filter((r) => r.ok).length;
    const updatedResults = await updateDevices(ctx, updates, owners);
    // a device that left its list between the read and the update is assigned anew (results are in the devices' order)
    const lost = updatedResults.flatMap((r, i) => (r.detail === 'NOT_INSTALLED' ? [i] : []));
    const assigning = concat(adds, pick(updates, lost));
    // after Redis restarted empty, each device goes back to the slave it was on, if alive
    const former = this.lists.formerSlaves(assigning.ids);
    await assignEach(ctx, assigning, tally.count, { prefer: former, unique });
    const { added, noSlave, already } = tally;
    // with no slave alive, changes wait too (NO_RUNNING_WORKER, as the SDK's update)
    const waiting = noSlave + updatedResults.filter((r) => r.detail === 'NO_RUNNING_WORKER').length;
    if (waiting) this.logOnce('assign', `NO_ACCEPTABLE_WORKER: no slave is alive, ${waiting} devices wait for one`);
    else if (this.lastError.delete('assign')) ctx.logger.info('slaves are back: devices assigned');
    if (already) ctx.logger.info('ALREADY_INSTALLED: assigned meanwhile by another manager', { devices: already });
    return { added, updated: updatedResults.filter((r) => r.ok).length, removed, waiting };
  }

  /** The health check: dead slaves' devices move to the alive ones. */
  private async healthCheck(): Promise<void> {
    const { ctx } = this;
    const dead = (await slaveStates(ctx)).filter((slave) => !slave.alive);
    if (!dead.length) return;
    // all in one read of the fleet: a dead process of 5,000 slaves (slaves: N) read it 5,000 times, one a slave
    let moved: Map<string, number>;
    try {
      moved = await relocateDeadSlaves(ctx, dead.map((slave) => slave.name));
    } catch (err) {
      if (!(err instanceof ObnizScriptError)) throw err;
      return this.logOnce('dead', `${err.message}: no alive slave can take them`);
    }
    for (const slave of dead) {
      const devices = moved.get(slave.name) ?? 0;
      if (devices) ctx.logger.warn('slave is dead: its devices moved', { slave: slave.name, devices, lastHeartbeatMs: slave.heartbeatMs });
    }
    if ([...moved.values()].some((n) => n > 0)) await this.synchronize();
  }

  /** Tells every slave to read its list (obniz-app-sdk's synchronize, syncType redis). */
  async synchronize(): Promise<void> {
    const message = envelope('synchronize', this.name, { syncType: 'redis' });
    await this.ctx.backend.send(['PUBLISH', channelFor(message, this.ctx.global.redis.keyPrefix, 'manager'), JSON.stringify(message)]);
  }

  private onManagerMessage(message: Envelope): void {
    if (message.action === 'report') this.ctx.logger.debug('slave report', { slave: message.info.from, devices: (message.body.installIds as unknown[] | undefined)?.length });
  }

  private logOnce(kind: string, text: string): void {
    if (this.lastError.get(kind) === text) return;
    this.lastError.set(kind, text);
    this.ctx.logger.error(text);
  }
}
