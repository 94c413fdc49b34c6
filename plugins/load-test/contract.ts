// The load test's keyspace: every key vikhry documents, under its names,
// plus coord's additions (marked extensions): a per-worker command stream that
// a late worker still reads (vikhry's Pub/Sub channel of the same name loses
// what nobody hears), the worker's acknowledgement, an index of metric streams,
// the probe streams with their index, and the round-robin cursor.
import { defineContract } from '../../core/contract.ts';

/** Unix time in seconds with a fraction (vikhry's Python tools write time.time()). */
const unixSeconds = { type: 'number', minimum: 0 };
const count = { type: 'integer', minimum: 0 };
const workerId = { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' };
const userId = { type: 'string', pattern: '^[0-9]+$' };
const metricName = { type: 'string', minLength: 1 };
/** A stream entry id, 'ms-seq'. */
const streamId = { type: 'string', pattern: '^[0-9]+-[0-9]+$' };

export const states = ['IDLE', 'PREPARING', 'RUNNING', 'STOPPING'] as const;
export type TestState = (typeof states)[number];
/** vikhry's four commands, and coord's set_rate (a load shape's arrival rate, changed while the test runs). */
export const commandTypes = ['start_test', 'stop_test', 'add_user', 'remove_user', 'set_rate'] as const;
export type CommandType = (typeof commandTypes)[number];

export const contract = defineContract({
  plugin: 'load-test',
  source: 'docs/layouts/load-test.md',
  keys: {
    testState: {
      pattern: 'test:state',
      type: 'string',
      description: 'Lifecycle IDLE → PREPARING → RUNNING → STOPPING → IDLE; changed only by compare-and-set (transitionState.lua).',
      ttl: 'none',
      writers: ['orchestrator'],
      value: { type: 'string', enum: [...states] },
    },
    testEpoch: {
      pattern: 'test:epoch',
      type: 'string',
      description: 'Incremented on each start; commands carry it and workers ignore older ones.',
      ttl: 'none',
      writers: ['orchestrator'],
      value: count,
    },
    generation: {
      pattern: 'test:generation',
      type: 'string',
      description:
        "A random id of this deployment's coordination state, created by the first test (beginTest.lua). When Redis restarts empty it is gone, and test:epoch counts from 0 again: a worker that sees another generation follows the new epochs instead of ignoring them as stale.",
      ttl: 'none',
      writers: ['orchestrator'],
      extension: true,
      value: { type: 'string', minLength: 1 },
    },
    workers: {
      pattern: 'workers',
      type: 'set',
      description: 'Registered workers; the orchestrator removes one whose heartbeat is older than deadAfter.',
      ttl: 'none',
      writers: ['worker', 'orchestrator'],
      member: workerId,
    },
    users: {
      pattern: 'users',
      type: 'set',
      description: 'Users of the running test, each assigned to a worker.',
      ttl: 'none',
      writers: ['orchestrator'],
      member: userId,
    },
    resources: {
      pattern: 'resources',
      type: 'hash',
      description: 'Declared resource counters: resource name → number of payloads the orchestrator built.',
      ttl: 'none',
      writers: ['orchestrator'],
      dynamicFields: { pattern: '{name}', value: count },
    },
    workerStatus: {
      pattern: 'worker:{workerId}:status',
      type: 'hash',
      description: 'Heartbeat and health of a worker, refreshed every heartbeatInterval; rss_bytes is the current RSS (not the peak).',
      ttl: 'optional',
      writers: ['worker', 'orchestrator'],
      derivable: true,
      fields: {
        status: { type: 'string', enum: ['idle', 'running', 'stopping', 'dead'] },
        last_heartbeat: unixSeconds,
        cpu_percent: { type: 'number', minimum: 0 },
        rss_bytes: count,
        memory_percent: { type: 'number', minimum: 0, maximum: 100 },
        total_ram_bytes: count,
        epoch: { ...count, description: 'coord: the epoch the worker is in' },
        host: { type: 'string', description: 'coord: the machine the worker runs on' },
      },
      required: ['status', 'last_heartbeat'],
    },
    workerUsers: {
      pattern: 'worker:{workerId}:users',
      type: 'set',
      description: 'Users assigned to a worker.',
      ttl: 'none',
      writers: ['orchestrator'],
      derivable: true,
      member: userId,
    },
    workerActiveUsers: {
      pattern: 'worker:{workerId}:active_users',
      type: 'set',
      description: 'Users whose virtual-user task is running on the worker right now.',
      ttl: 'none',
      writers: ['worker', 'orchestrator'],
      derivable: true,
      member: userId,
    },
    user: {
      pattern: 'user:{userId}',
      type: 'hash',
      description: 'One user: the worker it is assigned to, its status and when that last changed.',
      ttl: 'none',
      writers: ['orchestrator', 'worker'],
      derivable: true,
      params: { userId: '[0-9]+' },
      fields: {
        worker: workerId,
        status: { type: 'string', enum: ['assigned', 'running', 'stopping', 'reassigned'] },
        updated_at: unixSeconds,
      },
      required: ['worker', 'status', 'updated_at'],
    },
    resourceAvailable: {
      pattern: 'resource:{name}:available',
      type: 'set',
      description: 'Ids of a resource not held by any user: taken with SPOP, given back with SADD.',
      ttl: 'none',
      writers: ['worker'],
      derivable: true,
      member: { type: 'string', pattern: '^[0-9]+$' },
    },
    resourceLoaded: {
      pattern: 'resource:{name}:pool_loaded_count',
      type: 'string',
      description: 'How many ids of the resource have been put into its available set (the lazy sync watermark).',
      ttl: 'none',
      writers: ['worker'],
      derivable: true,
      value: count,
    },
    resource: {
      pattern: 'resource:{name}:{resourceId}',
      type: 'string',
      description: "One resource's payload (JSON), built by the scenario's factory on the orchestrator.",
      ttl: 'none',
      writers: ['orchestrator'],
      derivable: true,
      params: { resourceId: '[0-9]+' },
      value: { type: 'string' },
    },
    metric: {
      pattern: 'metric:{metricId}',
      type: 'stream',
      description: "One batch per worker per metricsInterval: request count, errors and the latency HDR histogram (µs) of that interval. Capped.",
      ttl: 'none',
      writers: ['worker'],
      derivable: true,
      params: { metricId: '.+' },
      maxLength: 20000,
      fields: {
        worker: workerId,
        epoch: count,
        ts: unixSeconds,
        kind: { type: 'string', enum: ['http', 'custom'], description: "http: requests (in the total); custom: the scenario's own measurements, failed steps and hooks" },
        count,
        errors: count,
        dropped: { ...count, description: 'arrival-rate iterations that found no free user in time' },
        sum: { type: 'number', minimum: 0, description: 'sum of the latencies in ms (the exact mean is the sum over the count)' },
        hist: { type: 'string', description: 'HDR histogram of latencies in µs, compressed base64 (hdr-histogram-js / HdrHistogram V2 encoding)' },
        aborted: { ...count, description: "requests the test's own stop cut off in flight (not in count, errors or the histogram)" },
        error_kinds: { type: 'object', additionalProperties: count, description: 'error message → count in this batch' },
        error_samples: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { first: { type: 'string' }, last: { type: 'string' } }, required: ['first', 'last'] },
          description: 'error kind → the full text of its first and last occurrence in this batch',
        },
      },
      required: ['worker', 'epoch', 'ts', 'count', 'errors', 'hist'],
    },
    timeline: {
      pattern: 'users:timeline',
      type: 'stream',
      description: 'Users over time and lifecycle events, written by the orchestrator. Capped.',
      ttl: 'none',
      writers: ['orchestrator'],
      maxLength: 20000,
      fields: {
        ts: unixSeconds,
        epoch: count,
        users: count,
        target: count,
        event: { type: 'string', enum: ['start', 'users', 'running', 'stop', 'stopped', 'worker_dead'] },
        detail: { type: 'string' },
      },
      required: ['ts', 'epoch', 'users', 'event'],
    },
    workerCommands: {
      pattern: 'worker:{workerId}:commands',
      type: 'stream',
      description:
        "The worker's commands as envelopes {type, command_id, epoch, sent_at, payload}. A stream, not Pub/Sub: a worker that starts reading late still gets them. Capped.",
      ttl: 'none',
      writers: ['orchestrator'],
      derivable: true,
      extension: true,
      maxLength: 10000,
      fields: {
        type: { type: 'string', enum: [...commandTypes] },
        command_id: { type: 'string', minLength: 1 },
        epoch: count,
        sent_at: unixSeconds,
        payload: { type: 'object' },
      },
      required: ['type', 'command_id', 'epoch', 'sent_at', 'payload'],
    },
    workerAck: {
      pattern: 'worker:{workerId}:ack',
      type: 'string',
      description: 'Id of the last command the worker has finished handling (a stop_test only once its users stopped and its metrics were written).',
      ttl: 'optional',
      writers: ['worker'],
      derivable: true,
      extension: true,
      value: streamId,
    },
    metrics: {
      pattern: 'metrics',
      type: 'set',
      description: 'Names of the metric streams, so the orchestrator reads them without SCAN.',
      ttl: 'none',
      writers: ['worker'],
      extension: true,
      member: metricName,
    },
    probe: {
      pattern: 'probe:{probe}',
      type: 'stream',
      description:
        "Values of one of the scenario's probes (vikhry's @probe), one entry per run on each worker started with --run-probes; a run that threw has error instead of values. Capped.",
      ttl: 'none',
      writers: ['worker'],
      derivable: true,
      extension: true,
      params: { probe: '[A-Za-z0-9_.-]+' },
      maxLength: 10000,
      fields: {
        worker: workerId,
        epoch: count,
        ts: unixSeconds,
        values: { type: 'object', additionalProperties: { type: 'number' }, description: 'name → number; a probe that returns one number has { value: n }' },
        error: { type: 'string', description: 'what the run threw' },
      },
      required: ['worker', 'epoch', 'ts'],
    },
    probes: {
      pattern: 'probes',
      type: 'set',
      description: 'Names of the probe streams, so the orchestrator reads them without SCAN.',
      ttl: 'none',
      writers: ['worker'],
      extension: true,
      member: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' },
    },
    orchestrator: {
      pattern: 'orchestrator',
      type: 'string',
      description:
        'Lease of the orchestrator running the current test (its id), taken in the same step as IDLE → PREPARING (beginTest.lua), refreshed while the test runs, given back with STOPPING → IDLE (endTest.lua): a test whose lease expired lost its orchestrator and may be reset by another.',
      ttl: 'required',
      writers: ['orchestrator'],
      extension: true,
      value: { type: 'string', minLength: 1 },
    },
    cursor: {
      pattern: 'users:cursor',
      type: 'string',
      description: 'Round-robin position of the next user assignment in the alive-worker snapshot.',
      ttl: 'none',
      writers: ['orchestrator'],
      extension: true,
      value: count,
    },
  },
});

export type LoadTestKeys = (typeof contract)['keys'];
