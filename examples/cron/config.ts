// The cron plugin's options: the jobs (what runs, how often) and how a runner
// behaves. Set under `plugins.cron` in a config file; times are in seconds.

export interface CronJob {
  id: string;
  every: number;
  command: string;
  timeout?: number;
}

export interface CronConfig {
  jobs: CronJob[];
  runnerId?: string;
  concurrency: number;
  pollInterval: number;
  sweepInterval: number;
  leaseGrace: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    jobs: {
      type: 'array',
      default: [],
      description: 'The jobs the scheduler queues a tick of every `every` seconds.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'every', 'command'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$', maxLength: 100, description: 'Names the job in keys and logs.' },
          every: { type: 'integer', minimum: 1, maximum: 604800, description: 'Seconds between ticks; ticks start at Unix times that are multiples of it.' },
          command: { type: 'string', minLength: 1, description: 'Shell command a runner runs once per tick (COORD_CRON_JOB, COORD_CRON_TICK and COORD_CRON_RUNNER are set).' },
          timeout: { type: 'number', exclusiveMinimum: 0, description: 'Seconds after which a run is killed and counted as failed (default: every).' },
        },
      },
    },
    runnerId: { type: 'string', pattern: '^[^:\\s]+$', description: 'Names this runner in leases and history (default: host-pid-random).' },
    concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 2, description: 'Runs one runner process has going at once.' },
    pollInterval: { type: 'number', exclusiveMinimum: 0, default: 1, description: 'How often an idle runner looks for due ticks when no wake-up message came.' },
    sweepInterval: { type: 'number', exclusiveMinimum: 0, default: 5, description: 'How often the scheduler records ticks whose lease expired as lost.' },
    leaseGrace: { type: 'number', minimum: 0, default: 5, description: "Seconds a lease outlives its job's timeout before the tick counts as lost." },
  },
} as const;

export const configEnv = {
  CRON_RUNNER_ID: 'runnerId',
  CRON_CONCURRENCY: 'concurrency',
} as const;

/** What the schema cannot say: job ids are unique. One message per problem. */
export function checkJobs(config: CronConfig): string[] {
  const first = new Map<string, number>();
  const problems: string[] = [];
  config.jobs.forEach((job, i) => {
    const seen = first.get(job.id);
    if (seen === undefined) first.set(job.id, i);
    else problems.push(`jobs[${i}].id "${job.id}" is also the id of jobs[${seen}]: job ids must be unique`);
  });
  return problems;
}

/** A job's timeout in seconds: its own, else its interval. */
export function timeoutOf(job: CronJob): number {
  return job.timeout ?? job.every;
}
