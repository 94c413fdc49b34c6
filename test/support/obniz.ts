// Helpers for obniz tests: a script context on any backend with a settable
// clock, and devices to assign.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../../core/backend.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { memoryLogger, type LogLevel } from '../../core/logger.ts';
import { scenarioContext } from '../../conformance/scenario-context.ts';
import plugin from '../../plugins/obniz/index.ts';
import type { ObnizConfig } from '../../plugins/obniz/config.ts';
import { Manager } from '../../plugins/obniz/roles/manager.ts';
import { Slave } from '../../plugins/obniz/roles/slave.ts';
import type { Ctx } from '../../plugins/obniz/context.ts';

export const T0 = 1_800_000_000_000;

/** A clock the test moves by hand (sleep resolves at once). */
export function manualClock(start = T0): Clock & { set(ms: number): void; advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: async () => {},
    set: (ms) => (now = ms),
    advance: (ms) => (now += ms),
  };
}

let run = 0;

/** A role context for the obniz plugin under a fresh hash-tag prefix (or '' for the SDK's bare keys). */
export function obnizCtx(backend: Backend, opts: { clock?: Clock; config?: Partial<ObnizConfig>; prefix?: string } = {}): Ctx {
  return scenarioContext({
    plugin,
    backend,
    keyPrefix: opts.prefix ?? `{obz${process.pid}-${++run}}:`,
    signal: new AbortController().signal,
    clock: opts.clock,
    config: opts.config as Record<string, unknown>,
  }) as Ctx;
}

/** Devices as obniz-app-sdk's DeviceInfo has them (configs a JSON string); `extra.configs` may be an object: it is encoded. */
export function devices(n: number, from = 0, extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => {
    const device = { id: `${String(from + i).padStart(4, '0')}-0000`, hardware: 'obnizb1', configs: { n: from + i } as unknown, ...extra };
    return { ...device, configs: typeof device.configs === 'string' ? device.configs : JSON.stringify(device.configs) };
  });
}

// ---- in-process roles
export const fixtures = new URL('../fixtures/obniz/', import.meta.url).pathname;

/** Short timings so tests see heartbeats, deaths and syncs in seconds; syncs happen on triggers, not by the clock. */
export const fastTimings: Partial<ObnizConfig> = {
  heartbeatInterval: 0.3,
  heartbeatTtl: 1.2,
  deadAfter: 1.5,
  healthCheckInterval: 0.3,
  syncInterval: 60,
  syncRetryInterval: 0.3,
  claimRetryInterval: 0.05,
  loopInterval: 0.05,
  watchInterval: 0.05,
  hookTimeout: 2,
  closeTimeout: 0.3,
  requestTimeout: 3,
};

export interface LifecycleEvent {
  t: number;
  ev: 'install' | 'start' | 'end' | 'uninstall' | 'connect' | 'close';
  id: string;
  slave: string;
  /** The device's configs as the worker parsed them (JSON.parse of the SDK's configs string). */
  configs: Record<string, unknown> | null;
}

/** The recording worker's events in this process (reset per call). */
export function recordEvents(): LifecycleEvent[] {
  const events: LifecycleEvent[] = [];
  (globalThis as { __obnizEvents?: LifecycleEvent[] }).__obnizEvents = events;
  (globalThis as { __obnizLoops?: Map<string, number> }).__obnizLoops = new Map();
  return events;
}

export function loops(): Map<string, number> {
  return (globalThis as unknown as { __obnizLoops: Map<string, number> }).__obnizLoops;
}

/** A device list file in a fresh temp folder. */
export function deviceFile(list: unknown, name = 'devices.json'): { path: string; write(list: unknown): void; writeText(text: string): void } {
  const path = join(mkdtempSync(join(tmpdir(), 'obniz-devices-')), name);
  const write = (l: unknown) => writeFileSync(path, JSON.stringify(l, null, 2));
  write(list);
  return { path, write, writeText: (text) => writeFileSync(path, text) };
}

type Lines = { level: LogLevel; msg: string; fields: Record<string, unknown> }[];

export function roleCtx(backend: Backend, prefix: string, config: Partial<ObnizConfig>, lines: Lines = []): Ctx {
  return scenarioContext({
    plugin,
    backend,
    keyPrefix: prefix,
    signal: new AbortController().signal,
    clock: systemClock,
    logger: memoryLogger(lines),
    config: { ...fastTimings, ...config } as Record<string, unknown>,
    roles: ['slave'],
  }) as Ctx;
}

export async function startSlave(backend: Backend, prefix: string, name: string, config: Partial<ObnizConfig> = {}, lines: Lines = []): Promise<Slave> {
  const slave = new Slave(roleCtx(backend, prefix, { worker: join(fixtures, 'recording-worker.mjs'), instanceName: name, ...config }, lines));
  await slave.start();
  return slave;
}

export async function startManager(backend: Backend, prefix: string, name: string, config: Partial<ObnizConfig> = {}, lines: Lines = []): Promise<Manager> {
  const manager = new Manager(roleCtx(backend, prefix, { instanceName: name, ...config }, lines));
  await manager.start();
  return manager;
}

/** Checks that no device ever ran on two slaves at once: its start/end intervals never overlap. */
export function overlaps(events: readonly LifecycleEvent[], endOf: (slave: string) => number = () => Infinity): string[] {
  const byDevice = new Map<string, LifecycleEvent[]>();
  for (const e of events) if (e.ev === 'start' || e.ev === 'end') byDevice.set(e.id, [...(byDevice.get(e.id) ?? []), e]);
  const problems: string[] = [];
  for (const [id, list] of byDevice) {
    const intervals: { slave: string; from: number; to: number }[] = [];
    const open = new Map<string, number>();
    for (const e of [...list].sort((a, b) => a.t - b.t || (a.ev === 'end' ? -1 : 1))) {
      if (e.ev === 'start') open.set(e.slave, e.t);
      else if (open.has(e.slave)) {
        intervals.push({ slave: e.slave, from: open.get(e.slave)!, to: e.t });
        open.delete(e.slave);
      }
    }
    for (const [slave, from] of open) intervals.push({ slave, from, to: endOf(slave) });
    intervals.sort((a, b) => a.from - b.from);
    for (let i = 1; i < intervals.length; i++) {
      const a = intervals[i - 1]!;
      const b = intervals[i]!;
      if (b.from < a.to) problems.push(`${id} ran on ${a.slave} [${a.from}, ${a.to}] and on ${b.slave} from ${b.from}`);
    }
  }
  return problems;
}
