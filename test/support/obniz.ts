// Helpers for obniz tests: a script context on any backend with a settable
// clock, and devices to assign.
import type { Backend } from '../../core/backend.ts';
import type { Clock } from '../../core/clock.ts';
import { scenarioContext } from '../../conformance/scenario-context.ts';
import plugin from '../../plugins/obniz/index.ts';
import type { ObnizConfig } from '../../plugins/obniz/config.ts';
import type { Ctx } from '../../plugins/obniz/store.ts';

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

export function devices(n: number, from = 0, extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => ({ id: `${String(from + i).padStart(4, '0')}-0000`, hardware: 'obnizb1', configs: { n: from + i }, ...extra }));
}
