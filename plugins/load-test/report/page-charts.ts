// The charts of the page and of the HTML report, as browser script (it runs
// after uPlot's, see page-assets.ts): requests, failures per second, latency
// percentiles and users over the test's wall-clock time, with units on the
// value axis, gridlines, and a legend that shows the values under the cursor
// (hovering one chart shows the same second in all of them).
// CoordCharts.draw(container, result) draws a TestResult's series into
// container, and on later calls updates the same charts in place.
// CoordCharts.drawProbes(container, probes) draws one chart per probe
// (GET /api/probes), a line per worker and value name, joined on time.
export const chartsScript = String.raw`
const CoordCharts = (() => {
  const SPECS = [
    { id: 'rps', title: 'requests per second', unit: 'req/s', series: [['requests', 'rps', '#36c']] },
    { id: 'errors', title: 'failures per second', unit: 'failures/s', series: [['failures', 'errors', '#c22']] },
    { id: 'latency', title: 'latency', unit: 'ms', series: [['p50', 'p50', '#1a7'], ['p95', 'p95', '#e80'], ['p99', 'p99', '#c22']] },
    { id: 'users', title: 'users', unit: 'users', series: [['users', 'users', '#639']] },
  ];
  // The series is per second: ticks on whole seconds (then minutes, hours).
  const WHOLE_SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400];
  const num = (v) => (Number.isInteger(v) || Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(Math.abs(v) < 10 ? 2 : 1));
  function columns(result, spec) {
    const t0 = result.startedAt / 1000;
    const points = result.series;
    return [points.map((p) => t0 + p.t), ...spec.series.map(([, key]) => points.map((p) => p[key]))];
  }
  function options(spec, width) {
    const grid = { stroke: '#e4e4e4', width: 1 };
    return {
      title: spec.title + ' (' + spec.unit + ')',
      width,
      height: 180,
      cursor: { drag: { x: false, y: false }, sync: { key: 'coord-load' } },
      scales: { x: { time: true }, y: { range: (u, min, max) => uPlot.rangeNum(0, Math.max(max, 1), 0.1, true) } },
      series: [
        { label: 'time', value: (u, v) => (v == null ? '--' : new Date(v * 1000).toLocaleTimeString()) },
        ...spec.series.map(([label, , color]) => ({ label, stroke: color, width: 1.5, value: (u, v) => (v == null ? '--' : num(v) + ' ' + spec.unit) })),
      ],
      axes: [{ grid, ticks: grid, incrs: WHOLE_SECONDS }, { label: spec.unit, size: 60, grid, ticks: grid }],
    };
  }
  function widthOf(el) {
    return Math.max(240, el.clientWidth - 4);
  }
  function draw(container, result) {
    if (!container.charts) {
      container.charts = {};
      container.innerHTML = SPECS.map((s) => '<div class="chart" data-chart="' + s.id + '" data-testid="chart-' + s.id + '"></div>').join('');
      addEventListener('resize', () => {
        for (const spec of SPECS) {
          const u = container.charts[spec.id];
          if (u) u.setSize({ width: widthOf(container.querySelector('[data-chart=' + spec.id + ']')), height: 180 });
        }
      });
    }
    for (const spec of SPECS) {
      const data = columns(result, spec);
      const u = container.charts[spec.id];
      if (u) u.setData(data);
      else {
        const el = container.querySelector('[data-chart=' + spec.id + ']');
        container.charts[spec.id] = new uPlot(options(spec, widthOf(el)), data, el);
      }
    }
  }
  const COLORS = ['#36c', '#c22', '#1a7', '#e80', '#639', '#0aa', '#a50', '#c3c'];
  function probeChart(probe) {
    const lines = [];
    for (const p of probe.points) for (const k of Object.keys(p.values)) if (!lines.some((l) => l.worker === p.worker && l.key === k)) lines.push({ worker: p.worker, key: k });
    const tables = lines.map((l) => {
      const pts = probe.points.filter((p) => p.worker === l.worker && l.key in p.values);
      return [pts.map((p) => p.ts), pts.map((p) => p.values[l.key])];
    });
    const data = tables.length ? uPlot.join(tables) : [[]];
    const label = (l) => (l.key === 'value' ? l.worker : l.worker + ' ' + l.key);
    return { lines, data, signature: lines.map(label).join('|'), label };
  }
  // Every new chart's box is placed in the grid before any is drawn: a chart sized while it was alone in its row
  // kept that width when the next one joined the row, and ran into it (titles and axes on top of each other).
  function drawProbes(container, probes) {
    if (!container.probeCharts) {
      container.probeCharts = {};
      addEventListener('resize', () => {
        for (const entry of Object.values(container.probeCharts)) entry.u.setSize({ width: widthOf(entry.el), height: 180 });
      });
    }
    const names = probes.map((p) => p.name);
    for (const name of Object.keys(container.probeCharts)) {
      if (!names.includes(name)) { container.probeCharts[name].u.destroy(); container.probeCharts[name].el.remove(); delete container.probeCharts[name]; }
    }
    const added = [];
    for (const probe of probes) {
      const c = probeChart(probe);
      let entry = container.probeCharts[probe.name];
      if (entry && entry.signature !== c.signature) { entry.u.destroy(); entry.el.remove(); delete container.probeCharts[probe.name]; entry = undefined; }
      if (entry) { entry.u.setData(c.data); continue; }
      const el = document.createElement('div');
      el.className = 'chart';
      el.dataset.testid = 'probe-chart';
      el.dataset.probe = probe.name;
      container.appendChild(el);
      added.push({ probe, c, el });
    }
    for (const { probe, c, el } of added) {
      const spec = { title: 'probe ' + probe.name, unit: '', series: c.lines.map((l, i) => [c.label(l), '', COLORS[i % COLORS.length]]) };
      const opts = options(spec, widthOf(el));
      opts.title = 'probe ' + probe.name;
      opts.cursor.sync.key = 'coord-probes';
      for (const s of opts.series.slice(1)) s.spanGaps = true;
      container.probeCharts[probe.name] = { u: new uPlot(opts, c.data, el), el, signature: c.signature };
    }
    // A row that got more charts narrows the ones drawn before.
    if (added.length) for (const entry of Object.values(container.probeCharts)) if (entry.u.width !== widthOf(entry.el)) entry.u.setSize({ width: widthOf(entry.el), height: 180 });
  }
  return { draw, drawProbes, specs: SPECS };
})();
`;
