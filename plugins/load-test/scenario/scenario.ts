// The scenario API: what a scenario module exports (default export, or a
// named `scenario`), and the checks that turn a bad one into one line naming
// the file, the field and what was expected.
import type { HttpClient } from '../clients/http-client.ts';
import type { JsonRpcClient } from '../clients/jsonrpc-client.ts';
import { parseDuration } from '../parse.ts';
import type { WsClient } from '../clients/ws-client.ts';
import type { ShapeOptions } from './shape.ts';
import type { TrafficOptions } from '../metrics/traffic.ts';
import { InputError } from '../errors.ts';

/** A resource a user holds: its id in the pool and the payload its factory built. */
export interface Resource<T = unknown> {
  readonly name: string;
  readonly id: string;
  readonly data: T;
}

/** What a step, hook or factory gets: one virtual user. */
export interface VirtualUser<P = Record<string, unknown>> {
  /** The user's id (1, 2, 3…, unique in the test). */
  readonly id: number;
  readonly workerId: string;
  /** The scenario's params with the test's overrides (--param k=v). */
  readonly params: Readonly<P>;
  /** Anything the user keeps between steps (a session cookie, a login). */
  readonly state: Record<string, unknown>;
  /** HTTP client; each request is recorded under its metric name. */
  readonly http: HttpClient;
  /** JSON-RPC 2.0 client over HTTP (endpoint: params.jsonrpcUrl, else the base URL); each call is recorded as "jsonrpc METHOD". */
  readonly jsonrpc: JsonRpcClient;
  /** WebSocket client (ws); connects, round trips and messages are recorded. */
  readonly ws: WsClient;
  /** Aborted when the user is stopped after the grace period. */
  readonly signal: AbortSignal;
  /** Takes a resource no other user holds (undefined when none is free). */
  acquire<T = unknown>(name: string): Promise<Resource<T> | undefined>;
  /** Gives a resource back to the pool. */
  release(resource: Resource): Promise<void>;
  /** Records a custom measurement: a duration in ms under a metric name, optionally as an error. */
  record(metric: string, ms: number, error?: string): void;
  /** A k6-style check: counted per name as passed or failed (threshold checks>99%); returns the condition. */
  check(name: string, condition: unknown): boolean;
  /** Waits; returns early when the user is asked to stop, rejects when it is aborted after the grace period. */
  sleep(ms: number): Promise<void>;
}

/** One thing a virtual user does, picked at random by `weight` among the steps its pacing (`every`) and `requires` allow; `run` gets the user. */
export interface Step<P = Record<string, unknown>> {
  name: string;
  /** Relative chance of being picked (default 1). */
  weight?: number;
  /** Pacing: at most once every N seconds, or every N..M seconds at random ([1, 3] or '1..3s'). */
  every?: number | [number, number] | string;
  /** The step is aborted after this long ('5s' or ms); an abort counts as an error. */
  timeout?: number | string;
  /** Names of steps that must have completed (without failing) at least once for this user before this one may run (vikhry's requires). */
  requires?: string[];
  run(user: VirtualUser<P>): unknown;
}

/** How a named pool of resources is built: `count` payloads, made once per test on the orchestrator; each is held by at most one user at a time across all workers. */
export interface ResourceFactory<P = Record<string, unknown>> {
  /** How many to build. */
  count: number;
  /** Builds the payload of resource `index` (1…count), on the orchestrator. */
  create(index: number, params: Readonly<P>): unknown;
}

/** What a probe's run gets: the worker it runs on and the test's params. */
export interface ProbeContext<P = Record<string, unknown>> {
  readonly workerId: string;
  readonly epoch: number;
  readonly params: Readonly<P>;
}

/**
 * A probe (vikhry's @probe): a function the workers started with --run-probes
 * call every `every` while a test runs; each value goes to the stream probe:<name>.
 */
export interface Probe<P = Record<string, unknown>> {
  /** How often ('500ms', '2s' or seconds as a number; default 1s). */
  every?: number | string;
  /** One number, or several named ones ({ queue: 3, lag: 12 }). */
  run(ctx: ProbeContext<P>): number | Record<string, number> | Promise<number | Record<string, number>>;
}

/**
 * A load test's scenario: what a scenario module exports (default export, or
 * a named `scenario`). Its steps, with optional params, resources, user hooks
 * and probes, and beside them a load shape (stages, rateStages, shape) and
 * allowNoRequests — see shape.ts and traffic.ts.
 */
export interface Scenario<P = Record<string, unknown>> extends ShapeOptions, TrafficOptions {
  name?: string;
  /** Init parameters with their defaults; a test may override them. */
  params?: P;
  /** Base URL of the HTTP client (default: params.baseUrl). */
  baseUrl?: string;
  resources?: Record<string, ResourceFactory<P>>;
  onStart?(user: VirtualUser<P>): unknown;
  onStop?(user: VirtualUser<P>): unknown;
  steps: Step<P>[];
  /** Probes by name, run only on workers started with --run-probes. */
  probes?: Record<string, Probe<P>>;
}

/** A scenario after its checks, with pacing and timeouts in milliseconds. */
export interface CheckedScenario {
  source: Scenario;
  name: string;
  params: Record<string, unknown>;
  steps: { name: string; weight: number; everyMs?: [number, number]; timeoutMs?: number; requires?: string[]; run: Step['run'] }[];
  resources: Record<string, ResourceFactory>;
  probes: { name: string; everyMs: number; run: Probe['run'] }[];
}

/**
 * Identity: gives a scenario module its types (`export default
 * defineScenario({...})`). The plugin checks the scenario when a test starts
 * and names the file, the field and what was expected when something is wrong.
 *
 * @example
 * import { defineScenario } from 'coordkit/load-test';
 *
 * export default defineScenario({
 *   params: { baseUrl: 'http://127.0.0.1:8080' },
 *   stages: '30s:10,1m:50,30s:0',
 *   steps: [
 *     { name: 'home', weight: 3, run: (user) => user.http.get('/') },
 *     { name: 'item', every: '1..3s', run: (user) => user.http.get(`/items/${user.id}`, { metric: 'GET /items/:id' }) },
 *   ],
 * });
 */
export function defineScenario<P = Record<string, unknown>>(scenario: Scenario<P>): Scenario<P> {
  return scenario;
}

export function checkScenario(value: unknown, where: string): CheckedScenario {
  const fail = (what: string): never => {
    throw new InputError(`scenario ${where}: ${what}`);
  };
  if (typeof value !== 'object' || value === null) fail('exports no scenario: expected `export default { steps: [...] }`');
  const s = value as Scenario;
  if (!Array.isArray(s.steps) || s.steps.length === 0) fail('steps is missing or empty: expected steps: [{ name, run(user) { … } }]');
  if (s.params !== undefined && (typeof s.params !== 'object' || s.params === null)) fail('params must be an object of defaults');
  for (const hook of ['onStart', 'onStop'] as const) {
    if (s[hook] !== undefined && typeof s[hook] !== 'function') fail(`${hook} must be a function (user) => …`);
  }
  const names = new Set<string>();
  const steps = s.steps.map((step, i) => {
    const at = `steps[${i}]`;
    if (typeof step !== 'object' || step === null) fail(`${at} is not an object`);
    if (typeof step.name !== 'string' || !step.name) fail(`${at}.name is missing`);
    if (names.has(step.name)) fail(`${at}.name "${step.name}" is used twice`);
    names.add(step.name);
    if (typeof step.run !== 'function') fail(`${at} (${step.name}) has no run(user) function`);
    const weight = step.weight ?? 1;
    if (typeof weight !== 'number' || !(weight > 0)) fail(`${at}.weight ${JSON.stringify(step.weight)} must be a number > 0`);
    if (step.requires !== undefined && (!Array.isArray(step.requires) || step.requires.some((r) => typeof r !== 'string'))) {
      fail(`${at}.requires must be a list of step names, e.g. requires: ['login']`);
    }
    return {
      name: step.name,
      weight,
      everyMs: step.every === undefined ? undefined : pacing(step.every, `${at}.every`, fail),
      timeoutMs: step.timeout === undefined ? undefined : ms(step.timeout, `${at}.timeout`, fail),
      requires: step.requires?.length ? [...step.requires] : undefined,
      run: step.run,
    };
  });
  checkRequires(steps, fail);
  const resources: Record<string, ResourceFactory> = {};
  for (const [name, r] of Object.entries(s.resources ?? {})) {
    if (!/^[A-Za-z0-9_-]+$/.test(name)) fail(`resources: name "${name}" may only have letters, digits, _ and -`);
    if (typeof r !== 'object' || r === null || typeof r.create !== 'function') fail(`resources.${name} needs count and create(index, params)`);
    if (!Number.isInteger(r.count) || r.count < 0) fail(`resources.${name}.count ${JSON.stringify(r.count)} must be a whole number`);
    resources[name] = r;
  }
  if (s.probes !== undefined && (typeof s.probes !== 'object' || s.probes === null || Array.isArray(s.probes))) {
    fail('probes must be an object: probes: { name: { every: \'1s\', run(ctx) { return 42; } } }');
  }
  const probes = Object.entries(s.probes ?? {}).map(([name, p]) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) fail(`probes: name "${name}" may only have letters, digits, _, . and -`);
    if (typeof p !== 'object' || p === null || typeof p.run !== 'function') fail(`probes.${name} has no run(ctx) function: expected { every: '1s', run(ctx) { return 42; } }`);
    const every = p.every ?? 1;
    const everyMs = typeof every === 'number' ? (every > 0 ? every * 1000 : fail(`probes.${name}.every ${every} must be more than zero (seconds)`)) : ms(every, `probes.${name}.every`, fail);
    return { name, everyMs, run: p.run };
  });
  return { source: s, name: s.name ?? where, params: { ...(s.params ?? {}) }, steps, resources, probes };
}

function ms(value: number | string, at: string, fail: (w: string) => never): number {
  if (typeof value === 'number') return value > 0 ? value : fail(`${at} ${value} must be more than zero (milliseconds)`);
  try {
    return parseDuration(value, at);
  } catch (err) {
    return fail((err as Error).message);
  }
}

/** 2 → [2000, 2000]; [1, 3] → [1000, 3000]; '1..3s' → [1000, 3000]; '500ms..1s'. */
function pacing(value: Step['every'], at: string, fail: (w: string) => never): [number, number] {
  let range: [number, number] | undefined;
  if (typeof value === 'number') range = [value * 1000, value * 1000];
  else if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'number')) range = [value[0] * 1000, value[1] * 1000];
  else if (typeof value === 'string') {
    const [a, b] = value.split('..');
    const unit = /[a-z]+$/.exec(b ?? a ?? '')?.[0] ?? 's';
    const withUnit = (t: string) => (/[a-z]$/.test(t) ? t : `${t}${unit}`);
    try {
      range = [parseDuration(withUnit(a!), at), parseDuration(withUnit(b ?? a!), at)];
    } catch {
      range = undefined;
    }
  }
  if (!range || !(range[0] > 0) || range[1] < range[0]) fail(`${at} ${JSON.stringify(value)} is not a pacing: expected seconds (2), a range [1, 3] or '1..3s'`);
  return range!;
}

/** Every required step exists, and every step can run some day (no step waits, through others, on itself). */
function checkRequires(steps: CheckedScenario['steps'], fail: (w: string) => never): void {
  const names = new Set(steps.map((s) => s.name));
  steps.forEach((step, i) => {
    for (const name of step.requires ?? []) {
      if (!names.has(name)) fail(`steps[${i}].requires names "${name}", which is no step: expected one of ${[...names].join(', ')}`);
      if (name === step.name) fail(`steps[${i}] (${step.name}) requires itself: it could never run`);
    }
  });
  const runnable = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const step of steps) {
      if (!runnable.has(step.name) && (step.requires ?? []).every((r) => runnable.has(r))) {
        runnable.add(step.name);
        grew = true;
      }
    }
  }
  const stuck = steps.filter((s) => !runnable.has(s.name)).map((s) => s.name);
  if (stuck.length) fail(`steps ${stuck.join(', ')} require each other: none of them could ever run`);
}

/** A base URL as the clients need it: absolute, with one of the schemes. */
function checkUrl(value: unknown, schemes: string[], what: string): void {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !schemes.includes(url.protocol) || !url.host) {
    const example = `${schemes[0]}//127.0.0.1:8080`;
    throw new InputError(`${what} ${JSON.stringify(value)} is not a URL the load test can use: expected ${schemes.map((s) => `${s}//`).join(' or ')} and a host, e.g. ${example}`);
  }
}

/**
 * The test's base URLs (baseUrl, jsonrpcUrl, wsUrl), checked before it starts:
 * `overrides` are the test's params (--param), named `paramLabel` in the error.
 */
export function checkUrls(scenario: CheckedScenario, overrides: Record<string, unknown>, where: string, paramLabel = '--param'): void {
  const params = { ...scenario.params, ...overrides };
  const label = (key: string) => (key in overrides ? `${paramLabel} ${key}` : `scenario ${where}: params.${key}`);
  if (scenario.source.baseUrl !== undefined) checkUrl(scenario.source.baseUrl, ['http:', 'https:'], `scenario ${where}: baseUrl`);
  else if (params.baseUrl !== undefined) checkUrl(params.baseUrl, ['http:', 'https:'], label('baseUrl'));
  if (params.jsonrpcUrl !== undefined) checkUrl(params.jsonrpcUrl, ['http:', 'https:'], label('jsonrpcUrl'));
  if (params.wsUrl !== undefined) checkUrl(params.wsUrl, ['ws:', 'wss:', 'http:', 'https:'], label('wsUrl'));
}
