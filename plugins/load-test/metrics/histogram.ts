// Latency histograms: HDR (hdr-histogram-js), values in microseconds with 3
// significant digits (±0.1%). Mergeable without loss: the orchestrator adds the
// workers' histograms bucket by bucket, so its percentiles are those of all
// requests together, not an average of averages. The package is CommonJS,
// so required (lazyModule), not imported: Node's ESM import parses a CommonJS
// package for export names, which every user thread paid at its start.
import type * as Hdr from 'hdr-histogram-js';
import { lazyModule } from '../../../entries/plugin.ts';

export type Histogram = Hdr.Histogram;

const hdr = lazyModule<typeof Hdr>('hdr-histogram-js');

/** Relative precision of a recorded value (3 significant digits). */
export const HISTOGRAM_PRECISION = 0.001;

export function newHistogram(): Histogram {
  return hdr().build({ numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1, autoResize: true });
}

/** Records a duration given in milliseconds. */
export function recordMs(histogram: Histogram, ms: number): void {
  histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
}

export function encodeHistogram(histogram: Histogram): string {
  return hdr().encodeIntoCompressedBase64(histogram);
}

export function decodeHistogram(text: string): Histogram {
  return hdr().decodeFromCompressedBase64(text);
}

/** Percentile in milliseconds (0 for an empty histogram). */
export function percentileMs(histogram: Histogram, percentile: number): number {
  return histogram.totalCount === 0 ? 0 : histogram.getValueAtPercentile(percentile) / 1000;
}
