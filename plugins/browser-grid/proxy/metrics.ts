// The proxy's Prometheus metrics, served on /metrics.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export type ProxyMetrics = ReturnType<typeof proxyMetrics>;

/** `waitingHere`: the clients queued at this proxy, read when /metrics is scraped. */
export function proxyMetrics(waitingHere: () => number) {
  const registry = new Registry();
  return {
    registry,
    connections: new Counter({ name: 'coord_grid_connections_total', help: 'Client connections by outcome', labelNames: ['browser', 'result'], registers: [registry] }),
    cdpSessions: new Counter({ name: 'coord_grid_cdp_sessions_total', help: 'CDP sessions by path: direct (to the browser, leased from a worker on this host) or worker (relayed by its CDP port)', labelNames: ['path'], registers: [registry] }),
    relays: new Gauge({ name: 'coord_grid_relays_active', help: 'Sessions this proxy relays now', registers: [registry] }),
    waiting: new Gauge({
      name: 'coord_grid_queue_waiting',
      help: 'Clients waiting at this proxy',
      registers: [registry],
      collect() {
        this.set(waitingHere());
      },
    }),
    selectSeconds: new Histogram({ name: 'coord_grid_admission_seconds', help: 'Time from connect to a chosen worker (includes queueing)', buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10, 60], registers: [registry] }),
  };
}
