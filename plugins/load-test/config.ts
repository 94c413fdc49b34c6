// The load test's options. Times are in seconds.
import type { StagesInput } from './scenario/shape.ts';

/** The plugin's name, which is also its config section's ('load-test.users'…) and its roles' in a process. */
export const PLUGIN_NAME = 'load-test';

export interface LoadTestConfig {
  host: string;
  port: number;
  token?: string;
  api: boolean;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  scenarioDir?: string;
  stages?: StagesInput;
  rateStages?: StagesInput;
  workerId?: string;
  workers: number | 'auto';
  threads: boolean;
  scenario?: string;
  heartbeatInterval: number;
  deadAfter: number;
  metricsInterval: number;
  gracefulStop: number;
  redisLostAfter: number;
  connections: number;
  threadHeapMb: number;
  maxIterationDelay: number;
  waitForWorkers: number;
  metricStreamMaxLen: number;
  timelineMaxLen: number;
  commandStreamMaxLen: number;
  runProbes: boolean;
  probeStreamMaxLen: number;
}

const seconds = (def: number, description: string) => ({ type: 'number', exclusiveMinimum: 0, default: def, description });

const stagesSchema = (description: string) => ({
  description,
  oneOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['duration', 'target'],
        properties: { duration: { type: ['string', 'number'] }, target: { type: ['string', 'number'] } },
      },
    },
  ],
});

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string', default: '127.0.0.1', description: 'Address the orchestrator\'s HTTP API and page bind (0.0.0.0 to serve other machines: set a token).' },
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 8089, description: 'Port of the API and page (0 picks a free one).' },
    token: { type: 'string', minLength: 1, description: 'When set, the API and page want it: Authorization: Bearer … or ?token=….' },
    api: { type: 'boolean', default: true, description: 'Serve the HTTP API and page (coord load run turns it off).' },
    allowedHosts: { type: 'array', items: { type: 'string', minLength: 1 }, description: "Host names the API answers besides the loopback names and the address it binds ('*': any); others get 403 (DNS rebinding)." },
    allowedOrigins: { type: 'array', items: { type: 'string', minLength: 1 }, description: "Origins (http://host:port) whose pages may call the API besides its own page ('*': any); others get 403." },
    scenarioDir: { type: 'string', minLength: 1, description: "Folder the API may start scenarios from (relative names resolve in it); default: the orchestrator's working folder. load-test.scenario is always allowed." },
    workerId: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$', description: 'Id of this worker (default: host name and a random suffix).' },
    workers: {
      oneOf: [{ type: 'integer', minimum: 1 }, { const: 'auto' }],
      default: 1,
      description: "Workers this process runs (auto: one per core). More than one: each runs its users in a worker thread of its own, and has the id <workerId>-<n>.",
    },
    threads: { type: 'boolean', default: false, description: "A single worker runs its users in a worker thread (more than one always does): on a core of their own, and a stop ends them even in synchronous code. coord load run turns it on." },
    scenario: { type: 'string', minLength: 1, description: 'Scenario module a worker loads when start_test names none, or the page starts by default.' },
    stages: stagesSchema('Users over time (k6 stages), used when a test gives no load shape of its own: "30s:10,1m:50,30s:0" or [{duration, target}]; the test ends after the last stage.'),
    rateStages: stagesSchema('Arrival rate over time (k6 ramping-arrival-rate), used when a test gives no load shape of its own: "10s:50/s,1m:200/s" or [{duration, target}]; starts from the test\'s rate (default 0).'),
    heartbeatInterval: seconds(1, 'How often a worker writes worker:<id>:status.'),
    deadAfter: seconds(5, 'Heartbeat age after which the orchestrator marks a worker dead and reassigns its users; must exceed heartbeatInterval.'),
    metricsInterval: seconds(1, 'How often a worker writes its metric batches.'),
    gracefulStop: seconds(5, 'How long a stopping user may finish its current step before it is aborted.'),
    redisLostAfter: seconds(30, "How long a test goes on while Redis does not answer (failing over, paused, gone): then a worker stops its users by itself, and the orchestrator ends the test with the results it holds (coord load run exits 98)."),
    connections: { type: 'integer', minimum: 0, default: 0, description: "HTTP connections per origin per worker (0: each user has its own, plus one per extra concurrent request in a step; N: the worker's users share N)." },
    threadHeapMb: {
      type: 'integer',
      minimum: 0,
      default: 1024,
      description:
        "Heap limit of each users' thread (MB of V8's old generation). Below 2,048, V8 collects garbage before the heap grows past about twice what is live (4× above), so a test's memory stays flat; a thread that needs more ends with an error naming this setting. 0: V8's own limit.",
    },
    maxIterationDelay: seconds(1, 'Arrival-rate mode: how long a due iteration waits for a free user before it is dropped.'),
    waitForWorkers: { type: 'number', minimum: 0, default: 10, description: 'How long a start waits for a first worker to register.' },
    metricStreamMaxLen: { type: 'integer', minimum: 100, default: 20000, description: 'Cap (MAXLEN ~) of each metric:<id> stream.' },
    timelineMaxLen: { type: 'integer', minimum: 100, default: 20000, description: 'Cap of users:timeline.' },
    commandStreamMaxLen: { type: 'integer', minimum: 100, default: 10000, description: 'Cap of each worker:<id>:commands stream.' },
    runProbes: { type: 'boolean', default: false, description: "A worker runs the scenario's probes while a test runs, writing their values to probe:<name> (vikhry's --run-probes)." },
    probeStreamMaxLen: { type: 'integer', minimum: 100, default: 10000, description: 'Cap (MAXLEN ~) of each probe:<name> stream.' },
  },
} as const;

export const configEnv = {
  LOAD_TEST_HOST: 'host',
  LOAD_TEST_PORT: 'port',
  LOAD_TEST_TOKEN: 'token',
  LOAD_TEST_WORKER_ID: 'workerId',
  LOAD_TEST_SCENARIO: 'scenario',
} as const;

/** `coord run --plugin load-test --role worker --run-probes --workers auto`. */
export const configFlags = { 'run-probes': 'runProbes', workers: 'workers' } as const;

/** The smallest users' thread heap limit that starts a thread with its scenario (MB). */
const MIN_THREAD_HEAP_MB = 64;

export function checkConfig(c: LoadTestConfig): string[] {
  const problems: string[] = [];
  if (c.deadAfter <= c.heartbeatInterval) {
    problems.push(`deadAfter (${c.deadAfter}s) must be greater than heartbeatInterval (${c.heartbeatInterval}s), or live workers are declared dead`);
  }
  if (c.redisLostAfter <= c.heartbeatInterval * 2) {
    problems.push(`redisLostAfter (${c.redisLostAfter}s) must be greater than two heartbeatIntervals (${c.heartbeatInterval * 2}s), or a worker stops its users between two heartbeats`);
  }
  if (c.threadHeapMb > 0 && c.threadHeapMb < MIN_THREAD_HEAP_MB) {
    problems.push(`threadHeapMb (${c.threadHeapMb}) must be 0 (V8's own limit) or at least ${MIN_THREAD_HEAP_MB}: a users' thread needs that much to load its scenario`);
  }
  return problems;
}
