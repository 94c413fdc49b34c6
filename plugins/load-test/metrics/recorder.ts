// A worker's metrics between two writes: per metric a request count, errors
// (by kind) and an HDR histogram of latencies. Recording is in memory only;
// flush() writes one batch per metric to its metric:<id> stream in one
// pipeline, about once a second — never one Redis write per request.
// Per error kind a batch also carries the full text of its first and last
// failure (an HTTP error's body, an exception's stack): the page's failures
// view. The text is made at the flush, from the two failures kept, so a
// failing request costs no string of its own.
// A flush whose write fails (Redis failing over, paused or gone) is kept and
// written again with the next flush until it is written: each batch carries
// its writer and a sequence number per metric, so the orchestrator counts a
// batch written twice (its first write went through, its reply was lost)
// once, and the writer's running total of requests, so what never arrives is
// named. Flushes are sent at once, not after the previous one's reply: a
// thread that users' code holds cannot take replies, yet what it flushed
// before it is terminated must reach Redis.
import { randomBytes } from 'node:crypto';
import type { Command, RoleContext } from '../../../entries/plugin.ts';
import type { LoadTestConfig } from '../config.ts';
import type { LoadTestKeys } from '../contract.ts';
import { encodeHistogram, newHistogram, recordMs, type Histogram } from './histogram.ts';

/** 'http': a request (counted in the total); 'custom': a scenario's own measurement, a failed step or hook. */
export type MetricKind = 'http' | 'custom';

/**
 * The error of a request the test's own stop cut off (Ctrl-C, the grace
 * period over): no failure of the target and no latency, so it is counted
 * apart ("aborted"), neither in the requests nor in their errors.
 */
export const ABORTED = 'aborted';

/** The full text of one failure, or how to make it (called at most twice a batch per kind). */
export type FailureDetail = string | (() => string);

/** Characters of a failure's text kept (its first line is the kind; the rest the body or stack). */
const DETAIL_CHARS = 2000;

interface Pending {
  kind: MetricKind;
  count: number;
  errors: number;
  dropped: number;
  /** Requests the test's stop aborted in flight (not in count, errors or the histogram). */
  aborted: number;
  /** Sum of the latencies in ms (the orchestrator's mean: cheaper and more exact than the histogram's). */
  sum: number;
  histogram: Histogram;
  kinds: Map<string, number>;
  /** Per kind, its first and last failure of the batch. */
  samples: Map<string, { first: FailureDetail; last: FailureDetail }>;
}

/** Error kinds kept per metric per batch; the rest are counted as "other". */
const MAX_KINDS = 20;

/** One flush's commands that have not all been written yet. */
interface Unwritten {
  commands: Command[];
  /** HTTP requests in its batches. */
  requests: number;
  /** Its write in flight, if any. */
  writing?: Promise<void>;
}

export class MetricsRecorder {
  private pending = new Map<string, Pending>();
  /** Flushes not written yet, oldest first. */
  private unwritten: Unwritten[] = [];
  /** Per metric, the sequence number of its last batch. */
  private readonly seqs = new Map<string, number>();
  /** This recorder among the worker's in this test (a worker that rejoins a test, or restarts, numbers its batches from 1 again). */
  readonly writer = randomBytes(4).toString('hex');
  /** Records since the recorder was made (for the worker's own log and tests). */
  recorded = 0;
  /** HTTP requests recorded since the recorder was made (completed and aborted): what the test's results must hold. */
  requests = 0;
  /** When false (the bench's "metrics off"), record() only counts. */
  enabled = true;
  /**
   * Asked for a flush by record() once the last one is this old: steps that block their thread starve the
   * session's flush timer, and a thread terminated at a stop loses what it had not flushed.
   */
  flushDue: { everyMs: number; flush: () => void } | undefined;
  /**
   * Where HTTP requests are counted as they are recorded, in memory the worker's main thread shares: a users'
   * thread terminated before it flushed still tells what it recorded (thread-session.ts).
   */
  countedIn: Int32Array | undefined;
  private lastFlushAt = performance.now();

  constructor(
    private readonly ctx: RoleContext<LoadTestConfig, LoadTestKeys>,
    private readonly workerId: string,
    private epoch: number,
  ) {}

  setEpoch(epoch: number): void {
    this.epoch = epoch;
  }

  record(metric: string, ms: number, error?: string, kind: MetricKind = 'custom', detail?: FailureDetail): void {
    this.recorded += 1;
    if (!this.enabled) return;
    if (kind === 'http' && this.countedIn) Atomics.add(this.countedIn, 0, 1);
    this.add(metric, ms, error, kind, detail);
    if (this.flushDue && performance.now() - this.lastFlushAt >= this.flushDue.everyMs) this.flushDue.flush();
  }

  private add(metric: string, ms: number, error: string | undefined, kind: MetricKind, detail: FailureDetail | undefined): void {
    const p = this.entry(metric, kind);
    if (error === ABORTED && kind === 'http') {
      p.aborted += 1;
      return;
    }
    p.count += 1;
    p.sum += ms;
    recordMs(p.histogram, ms);
    if (error !== undefined) {
      p.errors += 1;
      const kind = p.kinds.has(error) || p.kinds.size < MAX_KINDS ? error : 'other';
      p.kinds.set(kind, (p.kinds.get(kind) ?? 0) + 1);
      const text = detail ?? error;
      const sample = p.samples.get(kind);
      if (sample) sample.last = text;
      else p.samples.set(kind, { first: text, last: text });
    }
  }

  /** An arrival-rate iteration that found no free user in time. */
  dropped(metric = 'iterations'): void {
    this.entry(metric, 'custom').dropped += 1;
  }

  private entry(metric: string, kind: MetricKind): Pending {
    let p = this.pending.get(metric);
    if (!p) this.pending.set(metric, (p = { kind, count: 0, errors: 0, dropped: 0, aborted: 0, sum: 0, histogram: newHistogram(), kinds: new Map(), samples: new Map() }));
    return p;
  }

  /** Requests in flushes not written yet. */
  get unwrittenRequests(): number {
    return this.unwritten.reduce((sum, u) => sum + u.requests, 0);
  }

  /** Flushes not written yet. */
  get unwrittenBatches(): number {
    return this.unwritten.length;
  }

  /**
   * Writes what was recorded since the last flush, and every earlier flush
   * not written yet. Resolves once all are written; rejects when a write
   * fails, and what it could not write is kept for the next call.
   */
  flush(): Promise<void> {
    this.lastFlushAt = performance.now();
    this.takeBatches();
    return settleAll(this.unwritten.map((entry) => (entry.writing ??= this.write(entry))));
  }

  private async write(entry: Unwritten): Promise<void> {
    try {
      const replies = await this.ctx.backend.pipeline(entry.commands);
      const failed = entry.commands.filter((_command, i) => replies[i] instanceof Error);
      if (failed.length) {
        entry.commands = failed; // the ones written need not be again
        throw replies.find((r) => r instanceof Error);
      }
      this.unwritten.splice(this.unwritten.indexOf(entry), 1);
    } finally {
      entry.writing = undefined;
    }
  }

  /** What was recorded since the last flush, as one flush's commands (none when nothing was). */
  private takeBatches(): void {
    const batches = [...this.pending.entries()].filter(([, p]) => p.count > 0 || p.dropped > 0 || p.aborted > 0);
    this.pending = new Map();
    if (!batches.length) return;
    const { keys, config, clock } = this.ctx;
    const ts = (clock.now() / 1000).toFixed(3);
    let requests = 0;
    for (const [, p] of batches) if (p.kind === 'http') requests += p.count + p.aborted;
    this.requests += requests;
    const commands: Command[] = [['SADD', keys.metrics(), ...batches.map(([name]) => name)]];
    for (const [name, p] of batches) {
      const seq = (this.seqs.get(name) ?? 0) + 1;
      this.seqs.set(name, seq);
      const fields: (string | number)[] = ['worker', this.workerId, 'epoch', this.epoch, 'ts', ts, 'kind', p.kind, 'count', p.count, 'errors', p.errors];
      fields.push('writer', this.writer, 'seq', seq, 'total', this.requests);
      if (p.dropped) fields.push('dropped', p.dropped);
      if (p.aborted) fields.push('aborted', p.aborted);
      fields.push('sum', Number(p.sum.toFixed(3)), 'hist', encodeHistogram(p.histogram));
      if (p.kinds.size) {
        fields.push('error_kinds', JSON.stringify(Object.fromEntries(p.kinds)));
        const samples = [...p.samples].map(([kind, s]) => [kind, { first: detailText(s.first), last: detailText(s.last) }]);
        fields.push('error_samples', JSON.stringify(Object.fromEntries(samples)));
      }
      commands.push(['XADD', keys.metric({ metricId: name }), 'MAXLEN', '~', config.metricStreamMaxLen, '*', ...fields]);
    }
    this.unwritten.push({ commands, requests });
  }
}

/** Resolves once every promise has settled; rejects with the first rejection's reason, if any. */
async function settleAll(promises: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(promises)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

function detailText(detail: FailureDetail): string {
  const text = typeof detail === 'string' ? detail : detail();
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}…` : text;
}
