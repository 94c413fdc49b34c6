// uPlot (MIT, https://github.com/leeoniya/uPlot), the charting library of the
// page and the HTML report, read once from the installed package and inlined
// into both, so they work offline and a report is one self-contained file.
// uPlot over Chart.js or ECharts: 50 KB minified against 200 KB and 1 MB, it
// draws time series on a canvas (what these charts are), has time axes,
// gridlines and a legend that follows the cursor built in, and updating one
// each second with setData costs little in the orchestrator's page.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const read = (file: string) => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');

/** uPlot's browser build (defines the global uPlot). */
export const uplotScript: string = read('uPlot.iife.min.js');
/** uPlot's stylesheet. */
export const uplotCss: string = read('uPlot.min.css');

/** JSON for a <script> element: no "</script>" or "<!--" can end it early. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
