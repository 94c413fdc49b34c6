// A worker thread whose steps block it never runs the session's flush timer;
// if it is then terminated at a stop, what it had not flushed is lost. So the
// recorder also asks for a flush from record() once the last flush is
// metricsInterval old: checked here with the event loop held the whole time.
import t from 'tap';
import { createBackend } from '../adapters/index.ts';
import { scenarioContext } from '../conformance/scenario-context.ts';
import plugin from '../plugins/load-test/index.ts';
import { MetricsRecorder } from '../plugins/load-test/metrics/recorder.ts';

const block = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

t.test('record() asks for a flush once the last one is older than the interval, with no timer able to run', async (t) => {
  const backend = await createBackend({});
  t.teardown(() => backend.close());
  const ctx = scenarioContext({ plugin, backend, keyPrefix: '', signal: new AbortController().signal });
  const recorder = new MetricsRecorder(ctx, 'w1', 1);
  let asked = 0;
  const flushes: Promise<void>[] = [];
  recorder.flushDue = { everyMs: 500, flush: () => ((asked += 1), void flushes.push(recorder.flush())) };
  recorder.record('GET /', 1, undefined, 'http');
  t.equal(asked, 0, 'a fresh recorder: not due yet');
  block(600); // a step holding the thread: no timer runs
  recorder.record('GET /', 1, undefined, 'http');
  t.equal(asked, 1, 'the next record after the interval asks for a flush at once');
  recorder.record('GET /', 1, undefined, 'http');
  t.equal(asked, 1, 'and the flush restarts the interval');
  block(600);
  recorder.record('GET /', 1, undefined, 'http');
  t.equal(asked, 2);
  await Promise.all([...flushes, recorder.flush()]);
  const entries = (await backend.send(['XRANGE', ctx.keys.metric({ metricId: 'GET /' }), '-', '+'])) as [string, string[]][];
  const counts = entries.map(([, fields]) => Number(fields[fields.indexOf('count') + 1]));
  t.same(counts, [2, 2], 'every request written, in the two batches the flushes made (records 1–2, 3–4)');
});
