// Load shapes: how a test's load changes over time, as k6 and Locust users
// write them. Evaluated on the orchestrator every ramp tick; the users it
// asks for are spread over the workers like any others, the rate reaches
// them as set_rate commands.
//   stages       users over time (k6 `stages`, ramping-vus): each stage
//                moves the users linearly from the previous target to its own
//   rateStages   iterations per second over time (k6 ramping-arrival-rate),
//                from the start rate (--rate, default 0); users are the pool
//   shape        a function of the scenario (Locust's LoadTestShape.tick):
//                shape(elapsedMs) → { users, spawnRate? } or null to end
// Stages end the test when the last one is over; a shape function, when it
// returns null. A stage of 0s jumps to its target at once.
import { parseDuration } from '../parse.ts';
import type { CheckedScenario } from './scenario.ts';
import { InputError, ScenarioError } from '../errors.ts';

export interface Stage {
  durationMs: number;
  target: number;
}

/** What a shape function returns: the users wanted now, and how fast to get there (users per second). */
export interface ShapeTick {
  users: number;
  spawnRate?: number;
}

export type ShapeFunction = (elapsedMs: number) => ShapeTick | null | undefined;

/** Stages as text ('30s:10,1m:50,30s:0'; rates as '10s:50/s') or as a list of { duration, target }. */
export type StagesInput = string | readonly { duration: string | number; target: number | string }[];

/** What a scenario may declare about its shape (beside its steps). */
export interface ShapeOptions {
  stages?: StagesInput;
  rateStages?: StagesInput;
  shape?: ShapeFunction;
}

export type LoadShape =
  | { kind: 'stages'; stages: Stage[] }
  | { kind: 'rate-stages'; stages: Stage[]; startRate: number }
  | { kind: 'function'; shape: ShapeFunction; where: string };

/** What the shape wants at one moment; null: the shape is over, the test ends. */
export interface ShapeWant {
  users?: number;
  /** Users per second to start or stop towards `users`; undefined: follow at once. */
  spawnRate?: number;
  rate?: number;
}

const EXAMPLE = { users: '30s:10,1m:50,30s:0', rate: '10s:50/s,1m:200/s,10s:0' };

/** Parses stages from a flag, the config, the API or the scenario; `what` names where they came from. */
export function parseStages(value: unknown, what: string, unit: 'users' | 'rate'): Stage[] {
  const example = EXAMPLE[unit];
  const list: { duration: unknown; target: unknown }[] = [];
  if (typeof value === 'string') {
    for (const part of value.split(',').map((p) => p.trim())) {
      const at = part.lastIndexOf(':');
      if (at <= 0) throw new InputError(`${what} "${value}": "${part}" is not DURATION:TARGET, e.g. ${example}`);
      list.push({ duration: part.slice(0, at), target: part.slice(at + 1) });
    }
  } else if (Array.isArray(value)) {
    value.forEach((s: unknown, i) => {
      if (typeof s !== 'object' || s === null) throw new InputError(`${what}[${i}] is not { duration, target }, e.g. { duration: '30s', target: 10 }`);
      list.push(s as { duration: unknown; target: unknown });
    });
  } else {
    throw new InputError(`${what} must be stages as text (${example}) or a list of { duration, target }`);
  }
  if (!list.length) throw new InputError(`${what} has no stage: expected e.g. ${example}`);
  return list.map(({ duration, target }, i) => {
    const at = typeof value === 'string' ? `${what} stage ${i + 1}` : `${what}[${i}]`;
    const durationMs = /^0+(\.0+)?(ms|s|m|h)?$/.test(String(duration).trim()) ? 0 : parseDuration(duration, `${at} duration`);
    return { durationMs, target: parseTarget(target, at, unit) };
  });
}

function parseTarget(value: unknown, at: string, unit: 'users' | 'rate'): number {
  const text = String(value ?? '').trim();
  if (unit === 'users') {
    if (!/^\d+$/.test(text)) throw new InputError(`${at} target "${text}" is not a whole number of users`);
    return Number(text);
  }
  const m = /^(\d+(?:\.\d+)?)(?:\/(s|m|h))?$/.exec(text);
  if (!m) throw new InputError(`${at} target "${text}" is not a rate: expected e.g. 50, 50/s or 600/m`);
  return Number(m[1]) / { s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

/** The stages' value at `elapsedMs` (linear within a stage, from `start`); undefined once they are over. */
export function stageValue(stages: readonly Stage[], start: number, elapsedMs: number): number | undefined {
  let from = start;
  let t = elapsedMs;
  for (const stage of stages) {
    if (t < stage.durationMs) return from + ((stage.target - from) * t) / stage.durationMs;
    t -= stage.durationMs;
    from = stage.target;
  }
  return undefined;
}

/** The stages' value `aheadMs` later than `elapsedMs`, but never past the end of the stage `elapsedMs` is in (a jump comes on time). */
export function stageValueAhead(stages: readonly Stage[], start: number, elapsedMs: number, aheadMs: number): number | undefined {
  let end = 0;
  for (const stage of stages) {
    end += stage.durationMs;
    if (elapsedMs < end) return stageValue(stages, start, Math.min(elapsedMs + aheadMs, end - 0.001));
  }
  return undefined;
}

export function stagesDurationMs(stages: readonly Stage[]): number {
  return stages.reduce((ms, s) => ms + s.durationMs, 0);
}

export interface ShapeRequest {
  stages?: Stage[];
  rateStages?: Stage[];
  /** The start rate of rate stages. */
  rate?: number;
}

/**
 * The test's shape, as k6 ranks its options: the request's own stages (the
 * API's body, `load start` flags), else the config's (load-test.stages or
 * rateStages: a config file, --set, or `load run --stages`), else the
 * scenario's (stages, rateStages or a shape function); undefined for a test
 * of fixed users or a fixed rate.
 */
export function resolveShape(
  request: ShapeRequest,
  scenario: CheckedScenario,
  config: { stages?: StagesInput; rateStages?: StagesInput },
): LoadShape | undefined {
  const startRate = request.rate ?? 0;
  if (request.stages && request.rateStages) throw new InputError('give stages (users over time) or rateStages (arrival rate over time), not both');
  if (request.stages) return { kind: 'stages', stages: request.stages };
  if (request.rateStages) return { kind: 'rate-stages', stages: request.rateStages, startRate };
  if (config.stages !== undefined && config.rateStages !== undefined) throw new InputError('load-test.stages and load-test.rateStages are both set: give one load shape');
  if (config.stages !== undefined) return { kind: 'stages', stages: parseStages(config.stages, 'load-test.stages', 'users') };
  if (config.rateStages !== undefined) return { kind: 'rate-stages', stages: parseStages(config.rateStages, 'load-test.rateStages', 'rate'), startRate };
  const own = scenario.source as ShapeOptions;
  const where = `scenario ${scenario.name}`;
  const given = [own.shape !== undefined && 'shape', own.stages !== undefined && 'stages', own.rateStages !== undefined && 'rateStages'].filter(Boolean);
  if (given.length > 1) throw new InputError(`${where}: has ${given.join(' and ')}: give one load shape`);
  if (own.shape !== undefined) {
    if (typeof own.shape !== 'function') throw new InputError(`${where}: shape must be a function (elapsedMs) => { users, spawnRate } | null`);
    return { kind: 'function', shape: own.shape, where };
  }
  if (own.stages !== undefined) return { kind: 'stages', stages: parseStages(own.stages, `${where}: stages`, 'users') };
  if (own.rateStages !== undefined) return { kind: 'rate-stages', stages: parseStages(own.rateStages, `${where}: rateStages`, 'rate'), startRate };
  return undefined;
}

/** What the shape wants `elapsedMs` after the test began running; null when it is over. Throws an Error naming a bad value. */
export function shapeWant(shape: LoadShape, elapsedMs: number): ShapeWant | null {
  switch (shape.kind) {
    case 'stages': {
      const users = stageValue(shape.stages, 0, elapsedMs);
      return users === undefined ? null : { users: Math.round(users) };
    }
    case 'rate-stages': {
      const rate = stageValue(shape.stages, shape.startRate, elapsedMs);
      return rate === undefined ? null : { rate };
    }
    case 'function': {
      const tick = shape.shape(elapsedMs);
      if (tick === null || tick === undefined) return null;
      if (typeof tick !== 'object' || !Number.isInteger(tick.users) || tick.users < 0) {
        throw new ScenarioError(`${shape.where}: shape(${Math.round(elapsedMs)}) returned ${JSON.stringify(tick)}: expected { users: a whole number ≥ 0, spawnRate?: number > 0 } or null`, {
          code: 'COORD_ERR_LOAD_TEST_SHAPE_VALUE',
        });
      }
      if (tick.spawnRate !== undefined && !(typeof tick.spawnRate === 'number' && tick.spawnRate > 0)) {
        throw new ScenarioError(`${shape.where}: shape(${Math.round(elapsedMs)}) returned spawnRate ${JSON.stringify(tick.spawnRate)}: expected a number > 0 (users per second)`, {
          code: 'COORD_ERR_LOAD_TEST_SHAPE_VALUE',
        });
      }
      return { users: tick.users, spawnRate: tick.spawnRate };
    }
  }
}

/** How long stages last (the test ends then); undefined for a shape function (it ends the test by returning null). */
export function shapeDurationMs(shape: LoadShape): number | undefined {
  return shape.kind === 'function' ? undefined : stagesDurationMs(shape.stages);
}
