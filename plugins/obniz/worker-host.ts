// Runs one user worker for one device: its lifecycle (onInstall, onStart, an
// onLoop every loopInterval, onUninstall, onEnd), the device connection and
// its onObniz* hooks, and onRequest. A hook that throws is logged once per
// distinct error (one clear line, not one per second) and never stops the
// other workers; every wait is bounded, so an unreachable device cannot hang
// a stop.
import { type Clock, type Logger, ModuleLoadError, withDeadline } from '../../entries/plugin.ts';
import type { DeviceClass, DeviceConnection } from './device-class.ts';
import { WOKEN } from './loop.ts';
import type { DeviceInfo } from './values.ts';

/** The hooks a worker may have; all optional. onUnInstall is the SDK's spelling. */
export interface UserWorker {
  onInstall?(): unknown;
  onUninstall?(): unknown;
  onUnInstall?(): unknown;
  onStart?(): unknown;
  onLoop?(): unknown;
  onEnd?(): unknown;
  onRequest?(key: string): unknown;
  onObnizConnect?(obniz: DeviceConnection): unknown;
  onObnizLoop?(obniz: DeviceConnection): unknown;
  onObnizClose?(obniz: DeviceConnection): unknown;
  [field: string]: unknown;
}

/** What a worker gets besides its device: the slave's name and a logger. */
export interface WorkerApp {
  instanceName: string;
  logger: Logger;
}

export type WorkerFactory = (device: DeviceInfo, app: WorkerApp) => UserWorker;

export interface HostOptions {
  instanceName: string;
  logger: Logger;
  clock: Clock;
  create: WorkerFactory;
  loopIntervalMs: number;
  hookTimeoutMs: number;
  closeTimeoutMs: number;
  deviceClass?: DeviceClass;
  deviceOptions?: Record<string, unknown>;
}

export type HostState = 'stopped' | 'starting' | 'started' | 'stopping' | 'failed';

export class WorkerHost {
  state: HostState = 'stopped';
  private worker?: UserWorker;
  private device?: DeviceConnection;
  private loopAbort?: AbortController;
  private loopDone: Promise<void> = Promise.resolve();
  private starting: Promise<boolean> = Promise.resolve(false);
  /** hook → last error message logged, so a repeating failure is logged once. */
  private readonly failing = new Map<string, string>();
  private readonly logger: Logger;

  constructor(readonly install: DeviceInfo, private readonly opts: HostOptions) {
    this.logger = opts.logger.child({ obnizId: install.id });
  }

  get obnizId(): string {
    return this.install.id;
  }

  /** Starts the worker; false (logged) when it could not be made or onStart failed. */
  start(fresh: boolean): Promise<boolean> {
    this.starting = this.run(fresh);
    return this.starting;
  }

  private async run(fresh: boolean): Promise<boolean> {
    this.state = 'starting';
    try {
      this.worker = this.opts.create(this.install, { instanceName: this.opts.instanceName, logger: this.logger });
    } catch (err) {
      this.logger.error(`worker ${this.obnizId}: the worker class failed to construct: ${(err as Error).message}`, { error: (err as Error).message });
      this.state = 'failed';
      return false;
    }
    this.worker.deviceInfo ??= this.install;
    this.worker.install ??= this.install;
    this.device = this.makeDevice();
    if (this.device) this.worker.obniz ??= this.device;
    if (fresh) await this.call(['onInstall']);
    if (!(await this.call(['onStart'])).ok) {
      this.state = 'failed';
      await this.closeDevice();
      return false;
    }
    this.state = 'started';
    this.connectDevice();
    this.loopAbort = new AbortController();
    this.loopDone = this.loop(this.loopAbort.signal);
    return true;
  }

  /** Stops the worker: the loop ends (bounded wait), onUninstall when removed, the device closes, onEnd. */
  async stop(uninstall: boolean): Promise<void> {
    // A stop during onStart (a slave fencing) waits for it, then stops what it started: never a worker left running unlisted.
    if (this.state === 'starting') await this.starting;
    if (this.state !== 'started') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    this.loopAbort?.abort(WOKEN);
    const ended = await withDeadline(this.loopDone.then(() => true), this.opts.hookTimeoutMs, 'onLoop').catch(() => false);
    if (!ended) this.logger.error(`worker ${this.obnizId}: onLoop still running after ${this.opts.hookTimeoutMs / 1000} s; stopping it anyway`);
    if (uninstall) await this.call(['onUninstall', 'onUnInstall']);
    await this.closeDevice();
    await this.call(['onEnd']);
    this.state = 'stopped';
  }

  /** onRequest(key) → its answer as text ('' when it has none or fails). */
  async request(key: string): Promise<string> {
    if (this.state !== 'started') return '';
    const { value } = await this.call(['onRequest'], key);
    return value === undefined || value === null ? '' : String(value);
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.call(['onLoop']);
      await this.opts.clock.sleep(this.opts.loopIntervalMs, signal).catch(() => {});
    }
  }

  /**
   * Calls the first of the named hooks the worker has: ok with its value, or
   * not ok when it threw or timed out (logged). onLoop has no timeout here: a
   * slow loop only delays the next one.
   */
  private async call(names: string[], ...args: unknown[]): Promise<{ ok: boolean; value?: unknown }> {
    const name = names.find((n) => typeof this.worker?.[n] === 'function');
    if (!name) return { ok: true };
    const hook = this.worker![name] as (...a: unknown[]) => unknown;
    try {
      const run = Promise.resolve().then(() => hook.apply(this.worker, args));
      const value = name === 'onLoop' ? await run : await withDeadline(run, this.opts.hookTimeoutMs, name);
      if (this.failing.delete(name)) this.logger.info(`worker ${this.obnizId}: ${name} works again`);
      return { ok: true, value };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (this.failing.get(name) !== message) {
        this.failing.set(name, message);
        this.logger.error(`worker ${this.obnizId}: ${name} failed: ${message}`, { hook: name, error: message });
      }
      return { ok: false };
    }
  }

  private makeDevice(): DeviceConnection | undefined {
    const DeviceClass = this.opts.deviceClass;
    if (!DeviceClass) return undefined;
    try {
      const device = new DeviceClass(this.obnizId, { ...this.opts.deviceOptions, auto_connect: false });
      device.onconnect = (obniz) => this.call(['onObnizConnect'], obniz);
      device.onloop = (obniz) => this.call(['onObnizLoop'], obniz);
      device.onclose = (obniz) => this.call(['onObnizClose'], obniz);
      return device;
    } catch (err) {
      this.logger.error(`worker ${this.obnizId}: the device connection could not be made: ${(err as Error).message}`);
      return undefined;
    }
  }

  private connectDevice(): void {
    const device = this.device;
    if (!device) return;
    try {
      device.autoConnect = true;
      const pending = device.connect();
      if (pending instanceof Promise) pending.catch((err: unknown) => this.logger.warn(`worker ${this.obnizId}: device connection failed: ${(err as Error).message}`));
    } catch (err) {
      this.logger.warn(`worker ${this.obnizId}: device connection failed: ${(err as Error).message}`);
    }
  }

  private async closeDevice(): Promise<void> {
    const device = this.device;
    if (!device) return;
    this.device = undefined;
    try {
      const closing = device.closeWait ? device.closeWait() : Promise.resolve(device.close?.());
      await withDeadline(Promise.resolve(closing), this.opts.closeTimeoutMs, 'closing the device connection');
    } catch (err) {
      this.logger.warn(`worker ${this.obnizId}: ${(err as Error).message}`);
    }
  }
}

/** A factory from what a worker module exports: its default export (a class, or a function returning a worker). */
export function workerFactory(module: Record<string, unknown>, spec: string): WorkerFactory {
  const exported = module.default ?? module.Worker;
  if (typeof exported !== 'function') {
    throw new ModuleLoadError(`cannot load worker ${spec}: it has no default export (export default class MyWorker { onStart() {…} })`, { code: 'COORD_ERR_OBNIZ_WORKER_EXPORT' });
  }
  // A class or a plain function is called with new; an arrow function (no prototype) is called.
  // Deciding up front keeps the constructor's own error (say, an obniz-app-sdk Worker subclass
  // reaching for the SDK's App) the one reported, not a retry's "cannot be invoked without 'new'".
  if (exported.prototype === undefined) return exported as (device: DeviceInfo, app: WorkerApp) => UserWorker;
  const make = exported as new (device: DeviceInfo, app: WorkerApp) => UserWorker;
  return (device, app) => new make(device, app);
}
