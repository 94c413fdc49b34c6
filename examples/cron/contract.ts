// The cron plugin's keyspace, declared once: the key builders the roles use,
// `coord schema --plugin ./examples/cron`, the conformance suite and
// `coord inspect` all read this one declaration.
import { defineContract } from 'coordkit/plugin';

/** A job id as it appears in keys and list items: no colon (it separates id and tick). */
const jobId = { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' };
/** A tick: the Unix time in seconds at which it started (a multiple of the job's `every`). */
const tick = { type: 'integer', minimum: 0 };
const millis = { type: 'integer', minimum: 0 };
const counter = { type: 'integer', minimum: 0 };
/** '{jobId}:{tick}', how a queued or running tick is named. */
const item = { type: 'string', pattern: '^[A-Za-z0-9_.-]+:[0-9]+$' };
const status = { type: 'string', enum: ['ok', 'failed', 'lost', 'skipped'] };

export const contract = defineContract({
  plugin: 'cron',
  keys: {
    jobs: {
      pattern: 'jobs',
      type: 'set',
      description: 'Every job a scheduler has defined (what `coord cron status` lists).',
      ttl: 'none',
      writers: ['scheduler'],
      member: jobId,
    },
    job: {
      pattern: 'job:{jobId}',
      type: 'hash',
      description: 'A job: its definition (rewritten by every scheduler tick), the last tick queued, and counts of how its runs ended.',
      ttl: 'none',
      writers: ['scheduler', 'runner'],
      derivable: true,
      fields: {
        every: { type: 'integer', minimum: 1, description: 'seconds between ticks' },
        command: { type: 'string', minLength: 1 },
        timeout: { type: 'number', exclusiveMinimum: 0, description: 'seconds a run may take before it is killed' },
        lastTick: tick,
        scheduledAt: millis,
        runs: counter,
        failed: counter,
        lost: counter,
        skipped: counter,
        lastRunner: { type: 'string', minLength: 1 },
        lastStatus: status,
        lastFinishedAt: millis,
      },
      required: ['every', 'command', 'timeout'],
    },
    due: {
      pattern: 'due',
      type: 'list',
      description: 'Ticks queued by a scheduler and not yet claimed, oldest at the tail: a runner pops one per run.',
      ttl: 'none',
      writers: ['scheduler', 'runner'],
      item,
    },
    lease: {
      pattern: 'lease:{jobId}:{tick}',
      type: 'string',
      description: "A claimed tick: the runner that holds it. Expires after the job's timeout plus leaseGrace; a lease that expires before its run finishes marks the tick lost.",
      ttl: { min: 1 },
      writers: ['runner'],
      derivable: true,
      params: { tick: '[0-9]+' },
      value: { type: 'string', minLength: 1 },
    },
    running: {
      pattern: 'running',
      type: 'zset',
      description: 'Claimed ticks by the Unix second their lease ends: the sweep reads only the expired end (no SCAN over leases).',
      ttl: 'none',
      writers: ['runner', 'scheduler'],
      member: item,
      score: tick,
    },
    runs: {
      pattern: 'runs',
      type: 'stream',
      description: 'How each tick ended, newest last; capped at 1000 entries.',
      ttl: 'none',
      writers: ['runner', 'scheduler'],
      maxLength: 1000,
      fields: {
        jobId,
        tick,
        runner: { type: 'string', minLength: 1 },
        status,
        exitCode: { type: 'integer' },
        startedAt: millis,
        finishedAt: millis,
      },
      required: ['jobId', 'tick', 'status'],
    },
  },
  channels: {
    wake: {
      pattern: 'wake',
      description: 'Published when a tick is queued, so idle runners claim it at once instead of at their next poll.',
      message: item,
      publishers: ['scheduler'],
      subscribers: ['runner'],
    },
  },
});

export type CronKeys = typeof contract.keys;
