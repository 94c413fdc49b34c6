// Probes (vikhry's @probe): the scenario's module-level functions that a
// worker started with --run-probes calls every `every` while a test runs.
// Each value is one entry of the stream probe:<name> (worker, epoch, ts,
// values); a run that throws writes an entry with `error` instead, is logged
// once per probe per test, and the probe keeps running. The orchestrator reads
// the streams back for the page, the report and GET /api/probes.
import type { CheckedScenario } from './scenario.ts';
import type { Ctx } from '../context.ts';
import { ScenarioError } from '../errors.ts';

export interface ProbePoint {
  worker: string;
  /** Unix time in seconds. */
  ts: number;
  values: Record<string, number>;
}

export interface ProbeSeries {
  name: string;
  points: ProbePoint[];
  /** Runs that threw, by worker. */
  errors: Record<string, number>;
  /** The last error message seen. */
  lastError?: string;
}

/** Runs one test's probes on one worker until stop(). */
export class ProbeRunner {
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly logged = new Set<string>();
  /** Runs that threw, by probe (this test, this worker). */
  readonly failures = new Map<string, number>();

  constructor(
    private readonly ctx: Ctx,
    private readonly workerId: string,
    private readonly epoch: number,
    scenario: CheckedScenario,
    params: Readonly<Record<string, unknown>>,
  ) {
    const probeCtx = Object.freeze({ workerId, epoch, params });
    for (const probe of scenario.probes) {
      let busy = false;
      const tick = () => {
        if (busy) return; // a slow probe is not called again before it returns
        busy = true;
        const run = this.runOnce(probe.name, () => probe.run(probeCtx)).finally(() => {
          busy = false;
          this.pending.delete(run);
        });
        this.pending.add(run);
      };
      this.timers.push(setInterval(tick, probe.everyMs));
    }
  }

  private async runOnce(name: string, run: () => unknown): Promise<void> {
    const { backend, keys, config, clock, logger } = this.ctx;
    let fields: (string | number)[];
    try {
      fields = ['values', JSON.stringify(toValues(await run()))];
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      this.failures.set(name, (this.failures.get(name) ?? 0) + 1);
      if (!this.logged.has(name)) {
        this.logged.add(name);
        logger.warn('probe failed (logged once per test; it keeps running and its failures are counted)', { probe: name, workerId: this.workerId, error: message });
      }
      fields = ['error', message.slice(0, 500)];
    }
    const ts = (clock.now() / 1000).toFixed(3);
    await backend
      .pipeline([
        ['SADD', keys.probes(), name],
        ['XADD', keys.probe({ probe: name }), 'MAXLEN', '~', config.probeStreamMaxLen, '*', 'worker', this.workerId, 'epoch', this.epoch, 'ts', ts, ...fields],
      ])
      .catch((err: unknown) => logger.warn('probe value not written', { probe: name, error: (err as Error).message }));
  }

  /** Stops the timers and waits for the runs in flight to be written. */
  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    await Promise.all([...this.pending]);
  }
}

/** A probe's return value as named numbers; anything else is an error of the run. */
function toValues(value: unknown): Record<string, number> {
  if (typeof value === 'number' && Number.isFinite(value)) return { value };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length && entries.every(([, v]) => typeof v === 'number' && Number.isFinite(v))) return value as Record<string, number>;
  }
  throw new ScenarioError(`returned ${JSON.stringify(value) ?? String(value)}: expected a number or an object of numbers, e.g. { queue: 3 }`, {
    code: 'COORD_ERR_LOAD_TEST_PROBE_VALUE',
  });
}

/** Every probe's entries of one test (epoch), oldest first. */
export async function readProbes(ctx: Pick<Ctx, 'backend' | 'keys'>, epoch: number): Promise<ProbeSeries[]> {
  const { backend, keys } = ctx;
  const names = ((await backend.send(['SMEMBERS', keys.probes()])) as string[]).sort();
  const series: ProbeSeries[] = [];
  for (const name of names) {
    const entries = (await backend.send(['XRANGE', keys.probe({ probe: name }), '-', '+'])) as [string, string[]][];
    const s: ProbeSeries = { name, points: [], errors: {} };
    for (const [, list] of entries) {
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < list.length; i += 2) f[list[i]!] = list[i + 1]!;
      if (Number(f.epoch) !== epoch) continue;
      const worker = f.worker ?? '';
      if (f.error !== undefined) {
        s.errors[worker] = (s.errors[worker] ?? 0) + 1;
        s.lastError = f.error;
        continue;
      }
      try {
        s.points.push({ worker, ts: Number(f.ts), values: JSON.parse(f.values ?? '{}') as Record<string, number> });
      } catch {
        // an entry another tool wrote: skipped
      }
    }
    if (s.points.length || Object.keys(s.errors).length) series.push(s);
  }
  return series;
}
