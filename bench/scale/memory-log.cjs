// Memory of this process every MEM_LOG_MS (200) ms, a JSON line each to MEM_LOG_FILE:
// process.memoryUsage() (rss, heapTotal, heapUsed, external, arrayBuffers), VmHWM, and V8's spaces (size and used).
const v8 = require('node:v8');
const { appendFileSync, readFileSync } = require('node:fs');
const file = process.env.MEM_LOG_FILE;
const t0 = Date.now();
const mb = (b) => Math.round(b / 1048576);
function sample(tag) {
  const m = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024;
  const spaces = {};
  for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name.replace('_space', '')] = [mb(s.space_size), mb(s.space_used_size)];
  appendFileSync(file, JSON.stringify({ t: Date.now() - t0, tag, rss: mb(m.rss), hwm: Math.round(hwm), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), spaces }) + '\n');
}
const timer = setInterval(() => sample(), Number(process.env.MEM_LOG_MS || 200));
timer.unref();
process.on('exit', () => sample('exit'));
// and each garbage collection: its kind (1 minor, 4 major, 8 incremental, 16 weak callbacks), flags (4: forced) and duration
const { PerformanceObserver } = require('node:perf_hooks');
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) appendFileSync(file, JSON.stringify({ t: Math.round(e.startTime), gc: e.detail.kind, flags: e.detail.flags, ms: Math.round(e.duration * 10) / 10 }) + '\n');
}).observe({ entryTypes: ['gc'] });
