// Whether a test's results hold every request its workers sent. A worker
// writes a flush that failed again (metrics/recorder.ts), so a batch can
// reach its stream twice when the first write went through and only its reply
// was lost, and after newer batches: each batch's sequence number (per writer
// and metric) lets the second copy be skipped. Each batch also carries its writer's running total
// of requests, and a worker's heartbeat its final total once its users
// stopped; what a worker says it sent beyond what was read is unaccounted
// for, and the result says so (coord load run exits 98) instead of
// reporting fewer requests than the target saw. A writer is one worker's
// recorder for one test: a worker that rejoins the test (or restarts under
// the same id) numbers its batches from 1 again under a new writer.
import type { Batch } from './results.ts';

/** Why a test's results are not the whole story, for the summary and the exit code. */
export interface Incomplete {
  /** HTTP requests the workers recorded that no batch read holds. */
  unaccounted: number;
  /** One line per cause: a worker's missing batches, Redis lost, a stop no worker confirmed. */
  reasons: string[];
}

const sourceOf = (worker: string, writer: string) => `${worker}\u0000${writer}`;

/**
 * Sequence numbers seen, kept small: all up to `upTo`, and those seen above
 * it (a batch written again after newer ones arrives late, so there are few).
 */
class SeqSet {
  private upTo = 0;
  private readonly above = new Set<number>();

  /** false when `seq` was seen already. */
  add(seq: number): boolean {
    if (seq <= this.upTo || this.above.has(seq)) return false;
    this.above.add(seq);
    while (this.above.delete(this.upTo + 1)) this.upTo += 1;
    return true;
  }
}

export class RequestAccounting {
  /** Per writer and metric, the sequence numbers of the batches counted. */
  private readonly counted = new Map<string, SeqSet>();
  /** Per writer (worker \0 writer), the HTTP requests (completed and aborted) in the batches counted. */
  private readonly read = new Map<string, number>();
  /** Per writer, the most it said it recorded (a batch's running total, or its worker's final total). */
  private readonly said = new Map<string, number>();
  private readonly reasons: string[] = [];

  constructor(readonly epoch: number) {}

  /** Whether to count a batch: false for one already counted (written again after a failed write) or of another test. */
  accept(batch: Batch): boolean {
    if (batch.epoch !== this.epoch) return false;
    const source = sourceOf(batch.worker, batch.writer ?? '');
    if (batch.seq !== undefined) {
      const key = `${source}\u0000${batch.metric}`;
      let seqs = this.counted.get(key);
      if (!seqs) this.counted.set(key, (seqs = new SeqSet()));
      if (!seqs.add(batch.seq)) return false;
    }
    if (batch.kind === 'http') this.read.set(source, (this.read.get(source) ?? 0) + batch.count + (batch.aborted ?? 0));
    if (batch.total !== undefined) this.claim(batch.worker, batch.writer ?? '', batch.total);
    return true;
  }

  /** A worker's writer says it recorded `requests` HTTP requests in this test (so far, or in all). */
  claim(worker: string, writer: string, requests: number): void {
    const source = sourceOf(worker, writer);
    if (Number.isFinite(requests)) this.said.set(source, Math.max(requests, this.said.get(source) ?? 0));
  }

  /** A cause of missing results that no count shows (Redis lost, a worker that did not confirm its stop). */
  note(reason: string): void {
    if (!this.reasons.includes(reason)) this.reasons.push(reason);
  }

  /** undefined when every request a worker said it recorded was read and nothing else went missing. */
  verdict(): Incomplete | undefined {
    let unaccounted = 0;
    const reasons: string[] = [];
    for (const [source, said] of this.said) {
      const missing = said - (this.read.get(source) ?? 0);
      if (missing <= 0) continue;
      unaccounted += missing;
      reasons.push(`worker ${source.split('\u0000')[0]}: ${missing} of its ${said} requests are in no metric batch read (batches lost in Redis, or not written by a users' thread that was terminated or ran out of memory)`);
    }
    reasons.push(...this.reasons);
    return reasons.length ? { unaccounted, reasons } : undefined;
  }
}
