// The runner: claims due ticks (claimTick: one runner per tick), runs each
// job's shell command with a timeout, and records how it ended (finishTick).
// It claims when woken by the scheduler's message and at least every
// pollInterval; stop() claims nothing more and waits for the runs in flight.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Role, Subscriber } from 'coordkit/plugin';
import { claimTick, finishTick, type Claimed } from '../ticks.ts';
import type { CronContext } from '../context.ts';

export function runnerRole(ctx: CronContext): Role {
  const { config, clock, logger } = ctx;
  const runner = config.runnerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 4)}`;
  const wake = ctx.channels.wake();
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let subscriber: Subscriber | undefined;
  let loop: Promise<void> | undefined;
  let kick: (() => void) | undefined;

  /** Resolves on a wake-up message, a finished run, stop, or after pollInterval. */
  function idle(): Promise<void> {
    const woken = new Promise<void>((resolve) => (kick = resolve));
    return Promise.race([woken, clock.sleep(config.pollInterval * 1000, stopping.signal).catch(() => {})]);
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        while (inFlight.size < config.concurrency && !stopping.signal.aborted) {
          const claimed = await claimTick(ctx, runner);
          if (!claimed) break;
          const done = execute(claimed).finally(() => {
            inFlight.delete(done);
            kick?.();
          });
          inFlight.add(done);
        }
      } catch (error) {
        logger.warn('claiming failed', { error: (error as Error).message });
      }
      await idle();
    }
  }

  async function execute(claimed: Claimed): Promise<void> {
    const { jobId, tick } = claimed;
    const startedAt = clock.now();
    const { exitCode, output } = await shell(claimed, runner);
    const status = exitCode === 0 ? 'ok' : 'failed';
    const finishedAt = clock.now();
    try {
      const recorded = await finishTick(ctx, { jobId, tick, runner, status, exitCode, startedAt, finishedAt });
      const fields = { job: jobId, tick, status, exitCode, ms: finishedAt - startedAt, output };
      if (recorded) logger.info('job ran', fields);
      else logger.warn('job ran after its lease expired; the tick was recorded as lost', fields);
    } catch (error) {
      logger.error('could not record a run', { job: jobId, tick, error: (error as Error).message });
    }
  }

  return {
    async start() {
      subscriber = await ctx.backend.subscriber();
      subscriber.onMessage(() => kick?.());
      await subscriber.subscribe(wake);
      loop = run();
      logger.info('runner running', { runner, concurrency: config.concurrency });
    },
    async stop() {
      stopping.abort(new Error('runner stopping'));
      kick?.();
      await loop;
      await Promise.all(inFlight); // drain: each run ends by itself or at its timeout
      await subscriber?.close();
    },
  };
}

/** Output kept for the log: the last this many characters of stdout and stderr together. */
const OUTPUT_TAIL = 1000;

/** Runs the job's command in a shell: its exit code (-1 when killed or not started) and the end of its output. */
function shell(claimed: Claimed, runner: string): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(claimed.command, {
      shell: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, COORD_CRON_JOB: claimed.jobId, COORD_CRON_TICK: String(claimed.tick), COORD_CRON_RUNNER: runner },
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_TAIL));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), claimed.timeout * 1000);
    const done = (exitCode: number) => (clearTimeout(timer), resolve({ exitCode, output: output.trim() }));
    child.once('error', (error) => ((output += error.message), done(-1)));
    // 'close' waits for the output to end, which a command's own children may hold open after a kill: wait 1 s at most.
    child.once('exit', (code) => {
      const settle = setTimeout(() => done(code ?? -1), 1000);
      child.once('close', () => (clearTimeout(settle), done(code ?? -1)));
    });
  });
}
